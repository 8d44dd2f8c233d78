// Package superbrain is cloud-superbrain, the built-in managed memory: a
// caller writes short texts with metadata, searches them by relevance
// (BM25), lists and deletes them. It is reached like any managed service,
// through upstream.Invoker, and persists on the item-store port.
//
// Every memory belongs to one scope: the account, the project (or none) and
// the end user (or none) of the request. An operation sees its own scope
// only, never a neighbour's, not even through a cursor; that is the
// package's one invariant that must never bend.
//
// The package charges exactly, in one place (charges.go), never above the
// catalogue price, and knows nothing of HTTP, approvals, holds or limits:
// the invoke pipeline does those before and after calling it.
package superbrain

import (
	"context"
	"fmt"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/apitime"
)

// ServiceID is the catalogue id of the service.
const ServiceID = "cloud-superbrain"

// Operation ids.
const (
	OpWrite  = "memory.write"
	OpSearch = "memory.search"
	OpList   = "memory.list"
	OpDelete = "memory.delete"
)

// Service is the managed memory. It is safe for concurrent use; all state
// is in the store.
type Service struct {
	st       store.Store
	now      func() time.Time
	scanPage int
}

var _ upstream.Invoker = (*Service)(nil)

// New returns the service on st; now stamps memories.
func New(st store.Store, now func() time.Time) *Service {
	return &Service{st: st, now: now, scanPage: scanPage}
}

// Invoke runs one operation for the scope of r. Input errors are
// validation_failed with field locations (input.text, ...); deleting an
// absent memory is not_found; a full scope is conflict. The Result's charge
// is exact and at most the catalogue price, which r.MaxChargeMicro must
// cover: otherwise nothing runs, so a call is never done without being
// payable.
func (s *Service) Invoke(ctx context.Context, r upstream.Request) (upstream.Result, error) {
	if _, ok := prices[r.OperationID]; !ok {
		return upstream.Result{}, apierr.Invalid("Unknown operation.",
			apierr.Field("operationId", "%s has no operation %q", ServiceID, r.OperationID))
	}
	if r.MaxChargeMicro < prices[r.OperationID] {
		return upstream.Result{}, fmt.Errorf("superbrain: %s needs a hold of %d micro-credits, got %d",
			r.OperationID, prices[r.OperationID], r.MaxChargeMicro)
	}
	sc, err := scopeOf(r)
	if err != nil {
		return upstream.Result{}, err
	}
	var out any
	results := 0
	switch r.OperationID {
	case OpWrite:
		out, err = s.write(ctx, sc, r.Input, r.IdempotencyKey)
	case OpSearch:
		var found searchOutput
		found, err = s.search(ctx, sc, r.Input)
		out, results = found, len(found.Results)
	case OpList:
		out, err = s.list(ctx, sc, r.Input)
	case OpDelete:
		out, err = s.delete(ctx, sc, r.Input)
	}
	if err != nil {
		return upstream.Result{}, err
	}
	body, err := apitime.Marshal(out) // a built-in service's times are the API's
	if err != nil {
		return upstream.Result{}, fmt.Errorf("superbrain: encode %s output: %w", r.OperationID, err)
	}
	return upstream.Result{Output: body, ChargedMicro: charge(r.OperationID, results)}, nil
}

// Router is the managed services built into every deployment, reached in
// process: this one.
func Router(st store.Store, now func() time.Time) upstream.Router {
	return upstream.Router{ServiceID: New(st, now)}
}
