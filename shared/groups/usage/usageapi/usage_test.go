package usageapi_test

import (
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"platformapi/shared/harness/apitest"
)

type dims struct{ key, service, operation string }

type totals struct {
	requests, errors int64
	micro            int64
}

func micro(credits float64) int64 { return int64(credits*1_000_000 + 0.5) }

func str(v any) string { s, _ := v.(string); return s }

func TestUsageSumsEqualTheAuditEventsOfTheSameRangeAcrossConcurrentTraffic(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		start := e.Clock.Now().Truncate(time.Hour)
		// A credit, a hundred writes; on the emulator, which serves one
		// request at a time, 40, so that fewer prefill writes drain it.
		opening, prefill := int64(1_000_000), 70
		if onEmulator(e) {
			opening, prefill = 400_000, 10
		}
		root := rootKeyMicro(e, opening)
		// 30 writes' worth for the spender: the rest of its writes are 402.
		spender, _ := e.Child(root, map[string]any{"label": "spender"})
		narrow, _ := e.Child(root, map[string]any{"label": "narrow", "scopes": []string{"credits:read"}})
		for range prefill {
			e.Must(e.Do(invokeReq(root, apitest.Idem(), "memory.write", map[string]any{"text": "prefill"})), 200)
		}
		burst := func(n int) {
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					idem := apitest.Idem()
					w := e.Do(invokeReq(spender, idem, "memory.write", map[string]any{"text": "note " + strconv.Itoa(i)}))
					if w.Status == 200 {
						e.Must(e.Do(invokeReq(spender, idem, "memory.write", map[string]any{"text": "note " + strconv.Itoa(i)})), 200) // replay
					}
					e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: narrow}) // 403
					e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: narrow})
					e.Do(invokeReq(spender, apitest.Idem(), "memory.search", map[string]any{"query": "note"}))
				}()
			}
			wg.Wait()
		}
		burst(12)
		e.Clock.Advance(time.Hour) // a second hourly bucket
		burst(12)
		until := closeHour(t, e)

		// The events, summed as /usage should.
		evs := listAll(t, e, root, rangeQuery(start, until))
		fromEvents := map[dims]*totals{}
		var all totals
		var statuses = map[string]int{}
		for _, ev := range evs {
			d := dims{str(ev["keyId"]), "", str(ev["operation"])}
			if op := d.operation; len(op) > len("services.invoke.cloud-superbrain") && op[:len("services.invoke.cloud-superbrain")] == "services.invoke.cloud-superbrain" {
				d.service = "cloud-superbrain"
			}
			s := fromEvents[d]
			if s == nil {
				s = &totals{}
				fromEvents[d] = s
			}
			s.requests++
			all.requests++
			status := int(ev["status"].(float64))
			statuses[fmt.Sprintf("%d %s", status, str(ev["code"]))]++
			if status >= 400 {
				s.errors++
				all.errors++
			}
			s.micro += micro(ev["chargedCredits"].(float64))
			all.micro += micro(ev["chargedCredits"].(float64))
		}
		for _, must := range []string{"200 ", "402 insufficient_credits", "403 scope_denied"} {
			if statuses[must] == 0 {
				t.Errorf("no %q among the events: %v", must, statuses)
			}
		}
		if spent := opening - micro(e.Balance(root)); all.micro != spent {
			t.Errorf("events charge %d micro-credits, the account spent %d", all.micro, spent)
		}

		q := url.Values{"start": {start.Format(time.RFC3339)}, "end": {until.Format(time.RFC3339)}, "bucketWidth": {"1h"}}
		read := func(groupBy string) (map[dims]*totals, int) {
			q.Set("groupBy", groupBy)
			u := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/usage?" + q.Encode(), Key: root}), 200)
			out := map[dims]*totals{}
			buckets := u.Body["data"].([]any)
			for _, b := range buckets {
				for _, r := range b.(map[string]any)["results"].([]any) {
					r := r.(map[string]any)
					d := dims{str(r["keyId"]), str(r["serviceId"]), str(r["operation"])}
					s := out[d]
					if s == nil {
						s = &totals{}
						out[d] = s
					}
					s.requests += int64(r["requests"].(float64))
					s.errors += int64(r["errors"].(float64))
					s.micro += micro(r["chargedCredits"].(float64))
				}
			}
			return out, len(buckets)
		}
		grouped, n := read("key,service,operation")
		if n != 2 {
			t.Errorf("%d hourly buckets, want 2", n)
		}
		if len(grouped) != len(fromEvents) {
			t.Errorf("usage has %d groups, the events %d", len(grouped), len(fromEvents))
		}
		for d, want := range fromEvents {
			if got := grouped[d]; got == nil || *got != *want {
				t.Errorf("group %+v: usage %+v, events %+v", d, got, want)
			}
		}
		total, _ := read("")
		if got := total[dims{}]; got == nil || *got != all {
			t.Errorf("ungrouped usage %+v, events %+v", got, all)
		}
	})
}

func TestBadFiltersAreValidationFailed(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	now := e.Clock.Now()
	for _, q := range []string{
		"/v1/audit-events?since=yesterday",
		"/v1/audit-events?until=2026-13-01T00:00:00Z",
		"/v1/audit-events?since=" + url.QueryEscape(now.Format(time.RFC3339)) + "&until=" + url.QueryEscape(now.Add(-time.Hour).Format(time.RFC3339)),
		"/v1/audit-events?since=" + url.QueryEscape(now.Add(-91*24*time.Hour).Format(time.RFC3339)),
		"/v1/audit-events?status=abc",
		"/v1/audit-events?status=99",
		"/v1/audit-events?keyId=nope",
		"/v1/audit-events?operation=nothing.here",
		"/v1/audit-events?limit=0",
		"/v1/audit-events?limit=101",
		"/v1/audit-events?cursor=garbage",
		"/v1/usage?bucketWidth=1w",
		"/v1/usage?groupBy=project,color",
		"/v1/usage?start=soon",
		"/v1/usage?start=" + url.QueryEscape(now.Format(time.RFC3339)) + "&end=" + url.QueryEscape(now.Add(-time.Hour).Format(time.RFC3339)),
		"/v1/usage?cursor=garbage",
	} {
		e.Must(e.Do(apitest.Req{Method: "GET", Path: q, Key: root}), 400, "validation_failed")
	}
}

func TestFiltersSelectByKeyOperationAndStatus(t *testing.T) {
	e := apitest.New(t)
	since := e.Clock.Now()
	root, _ := e.RootKey(1, nil)
	narrow, rec := e.Child(root, map[string]any{"scopes": []string{"credits:read"}})
	e.Must(e.Do(invokeReq(root, apitest.Idem(), "memory.write", map[string]any{"text": "x"})), 200)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: narrow}), 403)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: narrow}), 200)
	until := closeHour(t, e)
	q := func(k, v string) url.Values { r := rangeQuery(since, until); r.Set(k, v); return r }
	for _, c := range []struct {
		query url.Values
		want  int
	}{
		{q("keyId", rec.Str("id")), 2},
		{q("status", "403"), 1},
		{q("operation", "services.invoke"), 1},
		{q("operation", "services.invoke.cloud-superbrain.memory.write"), 1},
		{q("operation", "credits.balance.read"), 1},
		{q("operation", "apiKeys.create"), 1},
	} {
		if got := listAll(t, e, root, c.query); len(got) != c.want {
			t.Errorf("%v: %d events, want %d", c.query, len(got), c.want)
		}
	}
	// Newest first, paged.
	var ids []string
	qq := rangeQuery(since, until)
	qq.Set("limit", "1")
	for range 10 {
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/audit-events?" + qq.Encode(), Key: root}), 200)
		for _, ev := range r.Body["data"].([]any) {
			ids = append(ids, ev.(map[string]any)["id"].(string))
		}
		next, _ := r.Body["nextCursor"].(string)
		if next == "" {
			break
		}
		qq.Set("cursor", next)
	}
	if len(ids) != 4 {
		t.Fatalf("paged %d events, want 4", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			t.Errorf("not newest first: %v", ids)
		}
	}
}
