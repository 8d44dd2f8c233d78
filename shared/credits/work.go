package credits

import (
	"fmt"
	"time"

	"platformapi/shared/ports"
	"platformapi/shared/work"
)

// Work is the credits group's work on p: the sweep that releases orphaned
// holds HOLD_GRACE (default GraceAfterDeadline) after their holder's
// deadline. A shortened grace sweeps as often, so that a test waits for no
// more than it.
func Work(p ports.Ports) (ports.Work, error) {
	grace := GraceAfterDeadline
	if v := p.Env("HOLD_GRACE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return ports.Work{}, fmt.Errorf("credits: HOLD_GRACE=%q: want a positive duration such as 30s", v)
		}
		grace = d
	}
	sweep := NewLedger(p.Store, p.Clock()).SweepPass(grace, p.Log(work.HoldSweeper.Function))
	return ports.Work{Passes: []work.Pass{{Name: work.HoldSweeper.Function, Every: min(work.HoldSweeper.LocalEvery(), grace), Run: sweep}}}, nil
}
