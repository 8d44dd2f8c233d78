package api

import (
	"fmt"
	"slices"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/routes"
	"platformapi/shared/groups/webhooks/eventdef"
)

// Group is one endpoint group as a process runs it: the registration of
// its operations, its work (queue workers, scheduled passes) and what it
// deploys beside them (its queues and Lambda functions). Each
// group package exposes one constructor from ports.Ports to its Group; the
// local process, the test harness and the OpenAPI generator call every
// constructor of one list (docs/structure.md).
type Group struct {
	Name     string
	Register func(*Kernel) error
	Work     ports.Work
	Deploy   deploy.Unit

	// Services and Events are the group's entries in the service catalogue
	// and in the webhook event catalogue, plain data. A Lambda links only
	// its own group, yet pricing, subscriptions and the kernel read whole
	// catalogues: the catalogue generator writes every group's entries
	// into the tables they read (docs/structure.md).
	Services []catalog.Service
	Events   []eventdef.Def

	// Routes are the group's rows of the route table: its endpoints and
	// their policy. A Lambda links only its own group, yet the kernel,
	// keys, audit and webhooks read every route: the catalogue generator
	// writes every group's rows into package routes (docs/structure.md).
	Routes []routes.Route

	// Scopes are the scopes the group's routes need, with what each
	// allows. Keys are checked against the whole set: the catalogue
	// generator writes every group's into routes.Scopes.
	Scopes []routes.Scope

	// Sections are the reference's sections for the group's routes.
	Sections []Section
}

// NewGroup is a group's constructor.
type NewGroup func(ports.Ports) (Group, error)

// Build is every group of list on p, in order.
func Build(list []NewGroup, p ports.Ports) ([]Group, error) {
	out := make([]Group, 0, len(list))
	for _, g := range list {
		built, err := g(p)
		if err != nil {
			return nil, err
		}
		out = append(out, built)
	}
	return out, nil
}

// Declared is what the groups of list deploy together: each built on empty
// ports (no infrastructure, an empty configuration), since a declaration
// depends on neither.
func Declared(list []NewGroup) (deploy.Unit, error) {
	groups, err := Build(list, ports.Ports{Getenv: func(string) string { return "" }})
	if err != nil {
		return deploy.Unit{}, err
	}
	var u deploy.Unit
	for _, g := range groups {
		u.Queues = append(u.Queues, g.Deploy.Queues...)
		u.Functions = append(u.Functions, g.Deploy.Functions...)
	}
	return u, nil
}

// Queues are the queues of a process serving list: those package work
// declares, then the groups'.
func Queues(list []NewGroup) ([]work.Queue, error) {
	u, err := Declared(list)
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(work.Queues), u.Queues...), nil
}

// NewWith is the kernel with groups registered (those cfg.Groups serves).
func NewWith(cfg Config, groups []Group) (*Kernel, error) {
	k := New(cfg)
	for _, g := range groups {
		k.sections = append(k.sections, g.Sections...)
	}
	for _, g := range groups {
		if err := g.Register(k); err != nil {
			return nil, fmt.Errorf("api: group %s: %w", g.Name, err)
		}
	}
	return k, nil
}

// WorkOf is the work of every group together, as work.Run runs it.
func WorkOf(groups []Group) ports.Work {
	var w ports.Work
	for _, g := range groups {
		w.Workers = append(w.Workers, g.Work.Workers...)
		w.Passes = append(w.Passes, g.Work.Passes...)
	}
	return w
}
