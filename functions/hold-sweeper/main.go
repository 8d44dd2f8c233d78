// Command hold-sweeper is the scheduled Lambda that releases the credit
// holds a crash orphaned (credits.Ledger.SweepHolds): a function that died
// between taking a hold and capturing or releasing it left the hold's
// amount out of the balance. An EventBridge rule invokes it on
// credits.SweeperFunction's schedule; it releases each hold still held
// credits.GraceAfterDeadline after its holder's deadline, with its ledger
// entry. The local server runs the same pass on a ticker (work.Run).
package main

import (
	"context"

	"platformapi/shared/groups/credits"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeScheduled("hold-sweeper", func(ctx context.Context, e *lambdaedge.Env) (func(context.Context) error, error) {
		w, err := credits.Work(credits.WorkDeps{Store: e.Store, Logger: e.Logger})
		if err != nil {
			return nil, err
		}
		return w.Pass(credits.SweeperFunction.Name)
	})
}
