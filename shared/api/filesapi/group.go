package filesapi

import (
	"platformapi/shared/api"
	"platformapi/shared/files"
	"platformapi/shared/ports"
)

// Group is the files group on p, its quota from FILES_QUOTA_FILES and
// FILES_QUOTA_BYTES, with the sweep of abandoned uploads.
func Group(p ports.Ports) (api.Group, error) {
	quota, err := QuotaFromEnv(p.Env)
	if err != nil {
		return api.Group{}, err
	}
	d := Deps{Store: p.Store, Bucket: p.Files, Quota: quota}
	return api.Group{Name: "files", Register: func(k *api.Kernel) error { return Register(k, d) }, Work: files.Work(p)}, nil
}
