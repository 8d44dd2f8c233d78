package runs

import (
	"fmt"
	"time"

	"platformapi/shared/ports"
	"platformapi/shared/work"
)

// Work is the runs group's work on p: the run worker on the runs queue.
// RUN_TIMEOUT bounds one attempt (default DefaultTimeout).
func Work(p ports.Ports) (ports.Work, error) {
	var timeout time.Duration
	if v := p.Env("RUN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return ports.Work{}, fmt.Errorf("runs: RUN_TIMEOUT=%q: want a positive duration such as 4m", v)
		}
		timeout = d
	}
	w := NewWorker(WorkerConfig{
		Config:   Config{Store: p.Store, Queue: p.Queue(work.Runs), Artifacts: p.Artifacts, Now: p.Now},
		Services: p.Services, Sealer: p.Sealer, Logger: p.Log(work.Runs.Consumer), Timeout: timeout,
	})
	return ports.Work{Workers: []work.Worker{w.Work()}}, nil
}
