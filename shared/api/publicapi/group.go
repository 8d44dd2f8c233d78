package publicapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
)

// ArchiveKey is the databases' archive public key ("ed25519:<base64>"),
// among a process's ports.Resources when it serves managed databases.
type ArchiveKey string

// Group is the public group on p.
func Group(p ports.Ports) (api.Group, error) {
	key, _ := ports.Resource[ArchiveKey](p)
	d := Deps{Backend: p.Backend, ArchivePublicKey: string(key)}
	return api.Group{Name: "public", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy}, nil
}

// Deploy is the public group's function: /health publishes the databases'
// archive key.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "public", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.Uses{deploy.UseArchiveSecret}},
}}
