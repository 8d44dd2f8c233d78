// Command catalogen writes the whole service catalogue, webhook event
// catalogue and route table from what each group declares
// (api.Group.Services, Events and Routes). A Lambda links only its own
// group, yet the kernel, pricing, selectors, keys, audit and webhook
// subscriptions read every group's entries, so the entries are written as
// plain tables into the packages those read: shared/base/catalog/zz_services.go,
// shared/groups/webhooks/zz_events.go and shared/base/routes/zz_routes.go.
//
// An entry the tables already list keeps its place and a new one goes
// last, so that the order of every listing (GET /v1/services, /pricing,
// the OpenAPI enums, docs/) is the order entries were added in and never
// moves when the list of groups does (docs/structure.md).
//
// `make catalogue` writes the tables; a test of this package fails when
// they differ from the declarations, or when two declarations name the
// same service, operation, event, route id or method and path.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/webhooks"
	"platformapi/shared/groups/webhooks/eventdef"
	"platformapi/shared/platform"
)

// Where the tables go, relative to the repository root.
const (
	servicesFile = "shared/base/catalog/zz_services.go"
	eventsFile   = "shared/groups/webhooks/zz_events.go"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	files, err := generate(platform.Groups)
	if err == nil {
		err = write(*root, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "catalogen:", err)
		os.Exit(1)
	}
}

// generate is the content of each table, by path, for the groups of list.
func generate(list []api.NewGroup) (map[string][]byte, error) {
	groups, err := api.Build(list, ports.Ports{Getenv: func(string) string { return "" }})
	if err != nil {
		return nil, err
	}
	rts, err := gatherRoutes(groups)
	if err != nil {
		return nil, err
	}
	services, events, err := gather(groups, rts.has)
	if err != nil {
		return nil, err
	}
	services = ordered(services, func(s catalog.Service) string { return s.ID }, serviceIDs(catalog.Services()))
	events = ordered(events, func(e eventdef.Def) string { return e.Name }, webhooks.EventNames())
	rt, err := renderRoutes(rts)
	if err != nil {
		return nil, err
	}
	svc, err := renderServices(services)
	if err != nil {
		return nil, err
	}
	ev, err := renderEvents(events)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{servicesFile: svc, eventsFile: ev, routesFile: rt}, nil
}

// serviceIDs are the ids of services, in order.
func serviceIDs(services []catalog.Service) []string {
	out := make([]string, len(services))
	for i, s := range services {
		out[i] = s.ID
	}
	return out
}

func write(root string, files map[string][]byte) error {
	for path, src := range files {
		if err := os.WriteFile(filepath.Join(root, path), src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// gather is every group's services and events, in the order of the groups,
// refusing a service id, an operation id or an event name declared twice
// (by two groups, or twice by one): a lookup would silently find only one.
// It also refuses an event whose emitting or reading operation is no route
// id that isRoute knows (the groups' declared routes): the webhook domain
// decides who may read an event by its reading route, and would find out
// only on the first publish.
func gather(groups []api.Group, isRoute func(id string) bool) ([]catalog.Service, []eventdef.Def, error) {
	var services []catalog.Service
	var events []eventdef.Def
	owner := map[string]string{}
	claim := func(kind, id, group string) error {
		key := kind + " " + id
		if prev, dup := owner[key]; dup {
			return fmt.Errorf("%s %q is declared by both group %s and group %s", kind, id, prev, group)
		}
		owner[key] = group
		return nil
	}
	for _, g := range groups {
		for _, s := range g.Services {
			if err := claim("service", s.ID, g.Name); err != nil {
				return nil, nil, err
			}
			for _, o := range s.Operations {
				if err := claim("operation", o.ID, g.Name); err != nil {
					return nil, nil, err
				}
			}
			services = append(services, s)
		}
		for _, e := range g.Events {
			if err := claim("event", e.Name, g.Name); err != nil {
				return nil, nil, err
			}
			for _, op := range []string{e.EmittedBy, e.ReadBy} {
				if !isRoute(op) {
					return nil, nil, fmt.Errorf("event %q of group %s names %q, which is no route", e.Name, g.Name, op)
				}
			}
			events = append(events, e)
		}
	}
	return services, events, nil
}

// ordered is declared with the entries previous lists (by key) first, in
// previous's order, then the others in declared order. An entry no longer
// declared is dropped.
func ordered[T any](declared []T, key func(T) string, previous []string) []T {
	rank := map[string]int{}
	for i, k := range previous {
		rank[k] = i
	}
	out := slices.Clone(declared)
	slices.SortStableFunc(out, func(a, b T) int {
		ra, oka := rank[key(a)]
		rb, okb := rank[key(b)]
		switch {
		case oka && okb:
			return ra - rb
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	return out
}

const header = "// Code generated by go run ./shared/internal/catalogen; DO NOT EDIT.\n\n"

func renderServices(services []catalog.Service) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header + "package catalog\n\n")
	b.WriteString("// services are every group's services (api.Group.Services), in the order\n" +
		"// they were added (docs/structure.md).\n")
	b.WriteString("var services = []Service{\n")
	for _, s := range services {
		fmt.Fprintf(&b, "{\nID: %s,\nName: %s,\nDescription: %s,\nAvailable: %t,\nOperations: []Operation{\n",
			strconv.Quote(s.ID), strconv.Quote(s.Name), strconv.Quote(s.Description), s.Available)
		for _, o := range s.Operations {
			fmt.Fprintf(&b, "{ID: %s, Summary: %s", strconv.Quote(o.ID), strconv.Quote(o.Summary))
			if o.PriceMicro != 0 {
				fmt.Fprintf(&b, ", PriceMicro: %d", o.PriceMicro)
			}
			for _, f := range []struct {
				name string
				set  bool
			}{{"Invocable", o.Invocable}, {"Durable", o.Durable}, {"Approval", o.Approval}} {
				if f.set {
					fmt.Fprintf(&b, ", %s: true", f.name)
				}
			}
			if len(o.Rates) > 0 {
				b.WriteString(",\nRates: []Rate{")
				for i, r := range o.Rates {
					if i > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "{Unit: %s, PriceMicro: %d}", strconv.Quote(r.Unit), r.PriceMicro)
				}
				b.WriteString("}")
			}
			b.WriteString("},\n")
		}
		b.WriteString("},\n},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func renderEvents(events []eventdef.Def) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header + "package webhooks\n\nimport \"platformapi/shared/groups/webhooks/eventdef\"\n\n")
	b.WriteString("// Catalogue is every event a webhook can subscribe to, with who may read\n" +
		"// it: every group's events (api.Group.Events), in the order they were\n" +
		"// added (docs/structure.md).\n")
	b.WriteString("var Catalogue = []eventdef.Def{\n")
	for _, e := range events {
		subject := e.Subject.String()
		if subject == "" {
			return nil, fmt.Errorf("event %s: unknown subject %d", e.Name, e.Subject)
		}
		fmt.Fprintf(&b, "{Name: %s, EmittedBy: %s, ReadBy: %s, Subject: eventdef.%s,\nDescription: %s},\n",
			strconv.Quote(e.Name), strconv.Quote(e.EmittedBy), strconv.Quote(e.ReadBy), subject, strconv.Quote(e.Description))
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
