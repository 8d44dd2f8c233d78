//go:build soakfaults

// Package faults is compiled into the local server only with the
// soakfaults build tag. The soak harness uses it to put the server where
// it wants to test it, on purpose rather than by luck: an account sliced
// while charges run, a crash right after a chosen write commits. And to
// break one invariant on purpose, so that its checker is seen to fail: a
// server that records no audit events, one that loses the hold marker a
// retry on a sliced account follows, one that loses its event outbox. A
// build without the tag has none of it (faults_off.go).
//
// The environment says what to inject:
//
//	SOAK_CRASH_AFTER=n     exit at once (as kill -9 would) after the n-th
//	                       write that commits (Put, Update, Delete, Transact)
//	SOAK_CRASH_MATCH=p     count only writes touching a key whose partition
//	                       or sort key starts with p
//	SOAK_FAULT=drop-audit  record no audit event
//	SOAK_FAULT=skip-hold-marker  never write a call hold's marker
//	SOAK_FAULT=drop-outbox       never store an event in the outbox
//	SOAK_STALL=capture     hold every third capture of a credit hold until
//	                       the sweep has released the hold (REQUEST_TIMEOUT
//	                       and two HOLD_GRACE passes, and 2 s more): a holder
//	                       that outlives its hold, as a starved process does
package faults

import (
	"context"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/app"
	"platformapi/shared/groups/credits"
)

// Enabled says whether this build carries the fault hooks.
const Enabled = true

// Apply injects what the environment asks for into rt, before its
// groups are built from it.
func Apply(rt *app.Runtime) {
	fault := os.Getenv("SOAK_FAULT")
	if fault == "drop-audit" {
		rt.Audit = nil
	}
	after, _ := strconv.ParseInt(os.Getenv("SOAK_CRASH_AFTER"), 10, 64)
	drop := dropNone
	switch fault {
	case "skip-hold-marker":
		drop = isHoldMarker
	case "drop-outbox":
		drop = isOutboxEvent
	}
	var stall time.Duration
	if os.Getenv("SOAK_STALL") == "capture" {
		stall = envDuration("REQUEST_TIMEOUT", 5*time.Second) + 2*envDuration("HOLD_GRACE", 10*time.Minute) + 2*time.Second
	}
	if after > 0 || stall > 0 || fault == "skip-hold-marker" || fault == "drop-outbox" {
		rt.Store = wrap(rt.Store, after, os.Getenv("SOAK_CRASH_MATCH"), drop, stall)
	}
}

// envDuration is the duration the environment names, or def.
func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

// Wrap serves POST /_soak/slice?key=<keyId>&n=<slices> to loopback
// callers: the key's account balance is split into n slices at once.
func Wrap(h http.Handler, rt *app.Runtime) http.Handler {
	st := rt.Store
	ledger := credits.NewLedger(st, time.Now)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_soak/slice" {
			h.ServeHTTP(w, r)
			return
		}
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil || !ap.Addr().IsLoopback() || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if err := slice(r.Context(), st, ledger, r.URL.Query().Get("key"), n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func slice(ctx context.Context, st store.Store, l *credits.Ledger, keyID string, n int) error {
	it, err := st.Get(ctx, store.Key{PK: "key#" + keyID, SK: "key"})
	if err != nil {
		return err
	}
	var rec struct {
		AccountID string `json:"accountId"`
	}
	if err := it.Doc(&rec); err != nil {
		return err
	}
	return l.SetSlices(ctx, rec.AccountID, n)
}
