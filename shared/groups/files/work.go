package files

import (
	"log/slog"
	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/store"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
)

// SweeperFunction is the file sweeper's Lambda: each hour it deletes file
// objects that no record owns (an upload or a deletion that died
// half-way; Repo.Sweep).
var SweeperFunction = deploy.Function{Name: "file-sweeper", MemoryMiB: 256, Timeout: 5 * time.Minute, Uses: deploy.Uses{deploy.UseTable, deploy.UseFiles},
	Schedule: work.Schedule{Every: time.Hour}}

// WorkDeps are what the files group's work uses: the table, the files
// bucket and the logger.
type WorkDeps struct {
	Store  store.Store
	Bucket blob.Bucket
	Logger *slog.Logger
}

// Work is the files group's work: the sweep of abandoned uploads.
func Work(d WorkDeps) ports.Work {
	sweep := NewRepo(Config{Store: d.Store, Bucket: d.Bucket}).SweepPass(ports.Log(d.Logger, SweeperFunction.Name))
	return ports.Work{Passes: []work.Pass{{Name: SweeperFunction.Name, Every: SweeperFunction.Schedule.LocalEvery(), Run: sweep}}}
}
