package filesapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
	"platformapi/shared/groups/files"
)

// New is the files group's operations on d; its work is files.Work's.
func New(d Deps) api.Group {
	return api.Group{Name: "files", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}
}

// Group is the files group on p, its quota from FILES_QUOTA_FILES and
// FILES_QUOTA_BYTES, with the sweep of abandoned uploads.
func Group(p ports.Ports) (api.Group, error) {
	quota, err := QuotaFromEnv(p.Env)
	if err != nil {
		return api.Group{}, err
	}
	g := New(Deps{Store: p.Store, Bucket: p.Files, Quota: quota})
	g.Work = files.Work(files.WorkDeps{Store: p.Store, Bucket: p.Files, Logger: p.Logger})
	return g, nil
}

// Deploy is the files group's function and its sweeper.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "files", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP.With(deploy.UseFiles)},
	files.SweeperFunction,
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Files", Description: "Project files: upload, read, download and delete, with content hashes and quotas."}, Files: []string{"files"}},
}
