package superbrain

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/base/apierr"
)

// harness is one service on one fresh store.
type harness struct {
	t     *testing.T
	svc   *Service
	st    store.Store
	clock *testclock.Clock
}

// eachBackend runs test on every backend teststores offers.
func eachBackend(t *testing.T, test func(t *testing.T, h *harness)) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			c := testclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			st := b.Open(t, c.Now)
			test(t, &harness{t: t, svc: New(st, c.Now), st: st, clock: c})
		})
	}
}

// who is the identity part of a request.
type who struct{ account, project, endUser string }

var alice = who{account: "acct_alice"}

func requestOf(w who) upstream.Request {
	return upstream.Request{ServiceID: ServiceID, AccountID: w.account, ProjectID: w.project, EndUser: w.endUser, RequestID: "req_test"}
}

// invoke calls op with the catalogue price as the hold, as the pipeline does.
func (h *harness) invoke(w who, op, input string) (upstream.Result, error) {
	r := requestOf(w)
	r.OperationID, r.Input, r.MaxChargeMicro = op, json.RawMessage(input), prices[op]
	return h.svc.Invoke(context.Background(), r)
}

// call invokes and decodes the output, failing the test on an error.
func call[T any](h *harness, w who, op, input string) T {
	h.t.Helper()
	res, err := h.invoke(w, op, input)
	if err != nil {
		h.t.Fatalf("%s %s: %v", op, input, err)
	}
	var out T
	if err := json.Unmarshal(res.Output, &out); err != nil {
		h.t.Fatalf("%s output %s: %v", op, res.Output, err)
	}
	return out
}

// write stores a memory one millisecond after the previous one, so
// creation order is also id order, and returns its id.
func (h *harness) write(w who, text string) string {
	h.t.Helper()
	h.clock.Advance(time.Millisecond)
	in, _ := json.Marshal(map[string]any{"text": text})
	return call[writeOutput](h, w, OpWrite, string(in)).ID
}

func (h *harness) search(w who, query string, limit int) []hit {
	h.t.Helper()
	in, _ := json.Marshal(map[string]any{"query": query, "limit": limit})
	return call[searchOutput](h, w, OpSearch, string(in)).Results
}

func (h *harness) listAll(w who) []string {
	h.t.Helper()
	var out []string
	cursor := ""
	for {
		in, _ := json.Marshal(map[string]any{"limit": 100, "cursor": cursor})
		page := call[listOutput](h, w, OpList, string(in))
		for _, m := range page.Data {
			out = append(out, m.ID)
		}
		if page.NextCursor == nil {
			return out
		}
		cursor = *page.NextCursor
	}
}

func hitIDs(hits []hit) []string {
	out := make([]string, len(hits))
	for i, hit := range hits {
		out[i] = hit.ID
	}
	return out
}

// wantAPIError checks err is a client error with the code and, when given,
// a field error at each location.
func wantAPIError(t *testing.T, err error, code apierr.Code, locations ...string) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	var got []string
	for _, f := range ae.Errors {
		got = append(got, f.Location)
	}
	for _, loc := range locations {
		if !slices.Contains(got, loc) {
			t.Fatalf("want a field error at %s, got %v", loc, ae.Errors)
		}
	}
}
