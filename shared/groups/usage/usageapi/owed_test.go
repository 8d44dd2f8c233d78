package usageapi_test

import (
	"context"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/domain/audit"
	"platformapi/shared/harness/apitest"
)

// losing loses the event of the first charged request that is not a
// replay, as a process that dies after storing the request's answer and
// before writing its event does.
type losing struct {
	*audit.Recorder
	lost atomic.Bool
}

func (l *losing) Record(ctx context.Context, e audit.Event) error {
	if e.ChargedMicro > 0 && !e.IdempotentReplayed && l.lost.CompareAndSwap(false, true) {
		return nil
	}
	return l.Recorder.Record(ctx, e)
}

// A charged call whose event was lost after its answer was stored has its
// charge audited, under its own request, once its retry replays the
// answer; replaying it again adds nothing. With nothing lost, a replay
// adds no second charge either (the contract-fields test).
func TestAChargeWhoseEventDiedWithItsProcessIsAuditedByTheReplay(t *testing.T) {
	rec := &losing{}
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		rec.lost.Store(false)
		since := e.Clock.Now()
		root, _ := e.RootKey(1, nil)
		call := invokeReq(root, apitest.Idem(), "memory.write", map[string]any{"text": "lost event"})
		first := e.Must(e.Do(call), 200)
		if !rec.lost.Load() {
			t.Fatal("the charged call's event was not lost: the test tests nothing")
		}
		for range 2 {
			if r := e.Must(e.Do(call), 200); r.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("not a replay: %v", r.Header)
			}
		}
		until := closeHour(t, e)
		evs := byRequest(listAll(t, e, root, rangeQuery(since, until)))
		orig := evs[first.Header.Get("X-Request-Id")]
		if len(orig) != 1 || orig[0]["chargedCredits"] != 0.01 || orig[0]["idempotentReplayed"] != false || orig[0]["status"] != 200.0 {
			t.Fatalf("the charged call's request has events %v, want one charged 0.01, not a replay", orig)
		}
		const op = "services.invoke.cloud-superbrain.memory.write"
		var charged, events int64
		for _, es := range evs {
			for _, ev := range es {
				if ev["operation"] == op {
					charged += micro(ev["chargedCredits"].(float64))
					events++
				}
			}
		}
		if spent := 1_000_000 - micro(e.Balance(root)); charged != 10_000 || spent != 10_000 || events != 3 {
			t.Errorf("%d events of the call charge %d micro-credits, the account spent %d; want 3 events and 10000", events, charged, spent)
		}
		q := url.Values{"start": {since.Truncate(time.Hour).Format(time.RFC3339)}, "end": {until.Format(time.RFC3339)}, "groupBy": {"operation"}}
		u := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/usage?" + q.Encode(), Key: root}), 200)
		var requests, usage int64
		for _, b := range u.Body["data"].([]any) {
			for _, r := range b.(map[string]any)["results"].([]any) {
				if r := r.(map[string]any); r["operation"] == op {
					requests += int64(r["requests"].(float64))
					usage += micro(r["chargedCredits"].(float64))
				}
			}
		}
		if requests != events || usage != charged {
			t.Errorf("usage counts %d requests charged %d, the events %d charged %d", requests, usage, events, charged)
		}
	}, apitest.Options{Audit: func(r *audit.Recorder) api.AuditRecorder { rec.Recorder = r; return rec }})
}

// A charged call whose answer was never stored, though its audit event was
// written (storing the answer failed, or the stored answer expired), runs
// again on its retry and finds the call's hold, captured: the retry owes
// the charge to the first attempt's event, which the store keeps once, so
// the call is charged and audited once.
func TestARetryAfterALostAnswerAuditsTheCallsChargeOnce(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		since := e.Clock.Now()
		root, rec := e.RootKey(1, nil)
		idem := apitest.Idem()
		call := invokeReq(root, idem, "memory.write", map[string]any{"text": "lost answer"})
		first := e.Must(e.Do(call), 200)
		if err := e.Store.Delete(context.Background(), store.Key{PK: "idem#" + rec.Str("id") + "#" + idem, SK: "idem"}); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Second)
		retry := e.Must(e.Do(call), 200)
		if retry.Header.Get("Idempotent-Replayed") == "true" {
			t.Fatal("the retry replayed a stored answer: the test tests nothing")
		}
		until := closeHour(t, e)
		evs := byRequest(listAll(t, e, root, rangeQuery(since, until)))
		const op = "services.invoke.cloud-superbrain.memory.write"
		var charged int64
		for _, es := range evs {
			for _, ev := range es {
				if ev["operation"] == op {
					charged += micro(ev["chargedCredits"].(float64))
				}
			}
		}
		if spent := 1_000_000 - micro(e.Balance(root)); spent != 10_000 || charged != spent {
			t.Fatalf("the account spent %d micro-credits on the call; its events charge %d", spent, charged)
		}
		if orig, again := evs[first.Header.Get("X-Request-Id")], evs[retry.Header.Get("X-Request-Id")]; len(orig) != 1 || len(again) != 1 {
			t.Fatalf("the attempts have %d and %d events; want one each", len(orig), len(again))
		}
	})
}

// dropping loses the events drop names, as processes that die after
// storing an answer and before writing its events do.
type dropping struct {
	*audit.Recorder
	drop atomic.Pointer[func(audit.Event) bool]
}

func (d *dropping) Record(ctx context.Context, e audit.Event) error {
	if f := d.drop.Load(); f != nil && (*f)(e) {
		return nil
	}
	return d.Recorder.Record(ctx, e)
}

// A call's first attempt took its hold and died before its event and its
// answer; the retry owed the charge to that attempt's event and died after
// storing its answer, before writing the owed event. The stored answer
// keeps what the retry owed, so the replay that answers the next retry
// writes it: the charge is audited once, under the first attempt.
func TestAChargeOwedToALostAttemptIsAuditedByTheReplayOfItsRetry(t *testing.T) {
	rec := &dropping{}
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		since := e.Clock.Now()
		root, key := e.RootKey(1, nil)
		idem := apitest.Idem()
		call := invokeReq(root, idem, "memory.write", map[string]any{"text": "owed twice"})
		charged := func(ev audit.Event) bool { return ev.ChargedMicro > 0 && !ev.IdempotentReplayed }
		rec.drop.Store(&charged)
		first := e.Must(e.Do(call), 200)
		if err := e.Store.Delete(context.Background(), store.Key{PK: "idem#" + key.Str("id") + "#" + idem, SK: "idem"}); err != nil {
			t.Fatal(err)
		}
		firstID := first.Header.Get("X-Request-Id")
		owedToFirst := func(ev audit.Event) bool { return ev.RequestID == firstID }
		rec.drop.Store(&owedToFirst)
		e.Clock.Advance(time.Second)
		if r := e.Must(e.Do(call), 200); r.Header.Get("Idempotent-Replayed") == "true" {
			t.Fatal("the retry replayed a stored answer: the test tests nothing")
		}
		rec.drop.Store(nil)
		if r := e.Must(e.Do(call), 200); r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatal("the third attempt did not replay the retry's answer")
		}
		until := closeHour(t, e)
		evs := byRequest(listAll(t, e, root, rangeQuery(since, until)))
		const op = "services.invoke.cloud-superbrain.memory.write"
		var total int64
		for _, es := range evs {
			for _, ev := range es {
				if ev["operation"] == op {
					total += micro(ev["chargedCredits"].(float64))
				}
			}
		}
		if spent := 1_000_000 - micro(e.Balance(root)); spent != 10_000 || total != spent || len(evs[firstID]) != 1 {
			t.Fatalf("the account spent %d micro-credits on the call; its events charge %d, %d of them under the first attempt", spent, total, len(evs[firstID]))
		}
	}, apitest.Options{Audit: func(r *audit.Recorder) api.AuditRecorder { rec.Recorder = r; return rec }})
}
