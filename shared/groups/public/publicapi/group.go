package publicapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
)

// New is the public group on d.
func New(d Deps) api.Group {
	return api.Group{Name: "public", Sections: sections, Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy}
}

// On is the public group of a process that serves managed databases:
// /health publishes their archive key ("ed25519:<base64>").
func On(archiveKey string) api.NewGroup {
	return func(p ports.Ports) (api.Group, error) {
		return New(Deps{Backend: p.Backend, ArchivePublicKey: archiveKey}), nil
	}
}

// Group is the public group of a process without managed databases.
func Group(p ports.Ports) (api.Group, error) { return On("")(p) }

// Deploy is the public group's function: /health publishes the databases'
// archive key.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "public", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.Uses{deploy.UseArchiveSecret}},
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Public", Description: "Health, the price catalogue, this document and its reference page. No key needed; served at the root and under `/v1`."}, Files: []string{"public"}},
}
