package credits

import (
	"fmt"
	"log/slog"
	"platformapi/shared/adapters/store"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
)

// SweeperFunction is the hold sweeper's Lambda: it releases credit holds a
// crash orphaned, each with its ledger entry, once their holder's deadline
// and GraceAfterDeadline passed (Ledger.SweepHolds), and cuts the ledger of
// every sliced account (Ledger.CutSliced); locally every minute.
var SweeperFunction = deploy.Function{Name: "hold-sweeper", MemoryMiB: 256, Timeout: 2 * time.Minute, Uses: deploy.Uses{deploy.UseTable},
	Schedule: work.Schedule{Every: 5 * time.Minute, Local: time.Minute}}

// WorkDeps are what the credits group's work uses: the table, the clock
// (nil is time.Now), the logger and the configuration (nil is os.Getenv).
type WorkDeps struct {
	Store  store.Store
	Now    func() time.Time
	Logger *slog.Logger
	Getenv func(string) string
}

// Work is the credits group's work: the sweep that releases orphaned
// holds HOLD_GRACE (default GraceAfterDeadline) after their holder's
// deadline. A shortened grace sweeps as often, so that a test waits for no
// more than it.
func Work(d WorkDeps) (ports.Work, error) {
	grace := GraceAfterDeadline
	if v := ports.Env("HOLD_GRACE", d.Getenv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return ports.Work{}, fmt.Errorf("credits: HOLD_GRACE=%q: want a positive duration such as 30s", v)
		}
		grace = d
	}
	sweep := NewLedger(d.Store, ports.Clock(d.Now)).SweepPass(grace, ports.Log(d.Logger, SweeperFunction.Name))
	return ports.Work{Passes: []work.Pass{{Name: SweeperFunction.Name, Every: min(SweeperFunction.Schedule.LocalEvery(), grace), Run: sweep}}}, nil
}
