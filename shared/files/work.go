package files

import (
	"time"

	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/work"
)

// SweeperFunction is the file sweeper's Lambda: each hour it deletes file
// objects that no record owns (an upload or a deletion that died
// half-way; Repo.Sweep).
var SweeperFunction = deploy.Function{Name: "file-sweeper", MemoryMiB: 256, Timeout: 5 * time.Minute, Uses: deploy.Uses{deploy.UseTable, deploy.UseFiles},
	Schedule: work.Schedule{Every: time.Hour}}

// Work is the files group's work on p: the sweep of abandoned uploads.
func Work(p ports.Ports) ports.Work {
	sweep := NewRepo(Config{Store: p.Store, Bucket: p.Files}).SweepPass(p.Log(SweeperFunction.Name))
	return ports.Work{Passes: []work.Pass{{Name: SweeperFunction.Name, Every: SweeperFunction.Schedule.LocalEvery(), Run: sweep}}}
}
