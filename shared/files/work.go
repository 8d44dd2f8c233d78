package files

import (
	"platformapi/shared/ports"
	"platformapi/shared/work"
)

// Work is the files group's work on p: the sweep of abandoned uploads.
func Work(p ports.Ports) ports.Work {
	sweep := NewRepo(Config{Store: p.Store, Bucket: p.Files}).SweepPass(p.Log(work.FileSweeper.Function))
	return ports.Work{Passes: []work.Pass{{Name: work.FileSweeper.Function, Every: work.FileSweeper.LocalEvery(), Run: sweep}}}
}
