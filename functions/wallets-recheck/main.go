// Command wallets-recheck is managed wallets' scheduled worker: an
// EventBridge rule invokes it each minute to advance every transaction not
// yet final that no message carries any more (an approval decided, a
// receipt nobody waited for after the worker's watches ran out, a
// dead-lettered message, a credit settlement a crash left pending). A pass
// is idempotent: every transaction write is conditional on its revision, so
// an overlapping or retried invocation signs and settles nothing twice.
package main

import (
	"context"

	"platformapi/shared/groups/swaps/walletsenv"
	"platformapi/shared/lambdaedge"
	"platformapi/shared/lambdaedge/walletslambda"
)

func main() {
	lambdaedge.ServeScheduled("wallets-recheck", func(ctx context.Context, e *lambdaedge.Env) (func(context.Context) error, error) {
		s, err := walletslambda.Services(ctx, e)
		if err != nil {
			return nil, err
		}
		return s.Work().Pass(walletsenv.RecheckFunction.Name)
	})
}
