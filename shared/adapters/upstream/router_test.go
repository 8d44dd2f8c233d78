package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// fixed answers every call with one result.
type fixed struct {
	res   Result
	calls int
}

func (f *fixed) Invoke(context.Context, Request) (Result, error) {
	f.calls++
	return f.res, nil
}

func TestRouterSendsEachServiceToItsInvoker(t *testing.T) {
	a := &fixed{res: Result{Output: json.RawMessage(`"a"`), ChargedMicro: 1}}
	b := &fixed{res: Result{Output: json.RawMessage(`"b"`), ChargedMicro: 2}}
	rt := Router{"svc-a": a, "svc-b": b}
	res, err := rt.Invoke(context.Background(), Request{ServiceID: "svc-b", MaxChargeMicro: 5})
	if err != nil || string(res.Output) != `"b"` || res.ChargedMicro != 2 || a.calls != 0 || b.calls != 1 {
		t.Fatalf("got %+v, %v (calls a=%d b=%d)", res, err, a.calls, b.calls)
	}
}

func TestRouterRefusesAServiceWithoutInvoker(t *testing.T) {
	rt := Router{"svc-a": &fixed{}, "svc-nil": nil}
	for _, id := range []string{"svc-x", "svc-nil", ""} {
		if _, err := rt.Invoke(context.Background(), Request{ServiceID: id}); !errors.Is(err, ErrNotConfigured) {
			t.Errorf("%q: want ErrNotConfigured, got %v", id, err)
		}
	}
}

func TestRouterNeverPassesAChargeOutsideTheMaximum(t *testing.T) {
	for _, tc := range []struct {
		name    string
		charged int64
		max     int64
		ok      bool
	}{
		{"below the maximum", 3, 5, true},
		{"at the maximum", 5, 5, true},
		{"free call with zero maximum", 0, 0, true},
		{"above the maximum", 6, 5, false},
		{"any charge when the call must be free", 1, 0, false},
		{"negative charge", -1, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := Router{"svc": &fixed{res: Result{ChargedMicro: tc.charged}}}
			res, err := rt.Invoke(context.Background(), Request{ServiceID: "svc", MaxChargeMicro: tc.max})
			if tc.ok && (err != nil || res.ChargedMicro != tc.charged) {
				t.Fatalf("got %+v, %v", res, err)
			}
			if !tc.ok && (!errors.Is(err, ErrBadUpstream) || res.ChargedMicro != 0) {
				t.Fatalf("want ErrBadUpstream and no charge, got %+v, %v", res, err)
			}
		})
	}
}
