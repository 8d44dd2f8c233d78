package upstream

import (
	"context"
	"fmt"
)

// Router sends each request to the invoker of its service, e.g.
//
//	upstream.Router{"cloud-superbrain": superbrain.New(st, time.Now), "core-research": research}
//
// It also enforces the price contract on every answer, so a built-in or
// remote service that over-reports its charge fails uncharged instead of
// charging more than was held.
type Router map[string]Invoker

var _ Invoker = Router(nil)

// Invoke dispatches r; a service without an invoker is ErrNotConfigured.
func (rt Router) Invoke(ctx context.Context, r Request) (Result, error) {
	inv, ok := rt[r.ServiceID]
	if !ok || inv == nil {
		return Result{}, fmt.Errorf("%w: %q", ErrNotConfigured, r.ServiceID)
	}
	res, err := inv.Invoke(ctx, r)
	if err != nil {
		return Result{}, err
	}
	if err := checkCharge(r, res); err != nil {
		return Result{}, err
	}
	return res, nil
}
