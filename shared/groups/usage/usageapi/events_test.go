package usageapi_test

import (
	"context"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/harness/apitest"
)

// contractFields are exactly the members of an event
// (docs/usage-and-audit.md).
var contractFields = []string{"chargedCredits", "code", "endUser", "id", "idempotentReplayed", "keyId", "method",
	"occurredAt", "operation", "path", "projectId", "requestId", "status"}

func TestEveryAuthenticatedRequestLeavesExactlyOneEventWithTheContractFields(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		since := e.Clock.Now()
		// A credit, a hundred writes; a tenth of it on the emulator.
		opening, spends := int64(1_000_000), 99
		if onEmulator(e) {
			opening, spends = 100_000, 9
		}
		root := rootKeyMicro(e, opening)
		tr := newTraffic(e)
		type want struct {
			status   int
			code     any
			op       string
			charged  float64
			replayed bool
			endUser  any
		}
		check := map[string]want{}
		expect := func(r *apitest.Resp, w want) { check[r.Header.Get("X-Request-Id")] = w }

		expect(tr.do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: root}), want{status: 200, code: nil, op: "projects.list"})
		narrow, _ := e.Child(root, map[string]any{"scopes": []string{"credits:read"}})
		expect(tr.do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: narrow}), want{status: 403, code: "scope_denied", op: "projects.list"})
		limited, _ := e.Child(root, map[string]any{"limits": map[string]any{"projects.list": map[string]any{"requestsPerMinute": 1}}})
		expect(tr.do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: limited}), want{status: 200, code: nil, op: "projects.list"})
		expect(tr.do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: limited}), want{status: 429, code: "limit_exceeded", op: "projects.list"})
		// A handler's own refusal, a charged invoke and its replay.
		refused := apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": ""}}
		expect(tr.do(refused), want{status: 400, code: "validation_failed", op: "projects.create"})
		// Its replay names the stored problem's code.
		expect(tr.do(refused), want{status: 400, code: "validation_failed", op: "projects.create", replayed: true})
		idem := apitest.Idem()
		write := invokeReq(root, idem, "memory.write", map[string]any{"text": "audit me"})
		expect(e.Must(tr.do(write), 200), want{status: 200, code: nil, op: "services.invoke.cloud-superbrain.memory.write", charged: 0.01})
		replay := e.Must(tr.do(write), 200)
		if replay.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("not a replay: %v", replay.Header)
		}
		expect(replay, want{status: 200, code: nil, op: "services.invoke.cloud-superbrain.memory.write", replayed: true})
		// An end user by privacy tier: as sent, pseudonym, nothing.
		pseudo, _ := e.Child(root, map[string]any{"privacyTier": "pseudonymous"})
		minimal, _ := e.Child(root, map[string]any{"privacyTier": "minimal"})
		asUser := map[string]string{"X-Service-End-User": "user-42"}
		expect(tr.do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root, Headers: asUser}), want{status: 200, code: nil, op: "credits.balance.read", endUser: "user-42"})
		p := tr.do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: pseudo, Headers: asUser})
		expect(p, want{status: 200, code: nil, op: "credits.balance.read", endUser: "pseudonym"})
		expect(tr.do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: minimal, Headers: asUser}), want{status: 200, code: nil, op: "credits.balance.read"})
		// 402: a call the balance cannot cover is refused and charged nothing.
		for range spends {
			e.Must(tr.do(invokeReq(root, apitest.Idem(), "memory.write", map[string]any{"text": "spend"})), 200)
		}
		expect(tr.do(invokeReq(root, apitest.Idem(), "memory.write", map[string]any{"text": "broke"})),
			want{status: 402, code: "insufficient_credits", op: "services.invoke.cloud-superbrain.memory.write"})
		// Unauthenticated requests reach no access control and leave nothing.
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: "sk_not_a_key"}), 401)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects"}), 401)

		until := closeHour(t, e)
		evs := listAll(t, e, root, rangeQuery(since, until))
		got := byRequest(evs)
		if len(evs) != len(tr.ids)+4 { // +4: the child keys created by e.Child outside tr
			t.Errorf("%d events for %d authenticated requests (+4 key creations)", len(evs), len(tr.ids))
		}
		for id := range tr.ids {
			if n := len(got[id]); n != 1 {
				t.Errorf("request %s left %d events", id, n)
			}
		}
		rootID := keyOf(t, e, root).ID
		for id, w := range check {
			ev := got[id][0]
			var fields []string
			for f := range ev {
				fields = append(fields, f)
			}
			sort.Strings(fields)
			if !slices.Equal(fields, contractFields) {
				t.Fatalf("event fields %v, want %v", fields, contractFields)
			}
			if ev["status"].(float64) != float64(w.status) || !reflect.DeepEqual(ev["code"], w.code) || ev["operation"] != w.op ||
				ev["chargedCredits"].(float64) != w.charged || ev["idempotentReplayed"] != w.replayed {
				t.Errorf("event %v, want %+v", ev, w)
			}
			switch w.endUser {
			case "pseudonym":
				if eu, _ := ev["endUser"].(string); !strings.HasPrefix(eu, "anon_") || strings.Contains(eu, "user-42") {
					t.Errorf("pseudonymous endUser %v", ev["endUser"])
				}
			default:
				if !reflect.DeepEqual(ev["endUser"], w.endUser) {
					t.Errorf("endUser %v, want %v", ev["endUser"], w.endUser)
				}
			}
			if !strings.HasPrefix(ev["id"].(string), "aud_") || ev["method"] == "" || !strings.HasPrefix(ev["path"].(string), "/v1/") || ev["projectId"] != nil {
				t.Errorf("event %v", ev)
			}
		}
		if ev := got[p.Header.Get("X-Request-Id")][0]; ev["keyId"] == rootID {
			t.Errorf("the child's event names the root key: %v", ev)
		}
	})
}

func TestNoEventHoldsASecretATokenOrAnAuthorizationHeader(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		since := e.Clock.Now()
		token := e.Token(1)
		r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Idem: apitest.Idem(), Body: map[string]any{"label": "root"},
			Headers: map[string]string{"X-Service-Credit-Token": token}}), 201)
		root := r.Str("secret")
		child, _ := e.Child(root, map[string]any{"label": "child"})
		secrets := []string{root, child, token, "Bearer", "authorization", "Authorization", "audit me please"}
		e.Must(e.Do(invokeReq(root, apitest.Idem(), "memory.write", map[string]any{"text": "audit me please"})), 200)
		e.Do(apitest.Req{Method: "GET", Path: "/v1/projects?secret=" + url.QueryEscape(child), Key: child})
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: child, Idem: apitest.Idem(), Body: map[string]any{"label": root}}), 201)
		// A secret sent by mistake in the path or as the end user.
		e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + child, Key: root})
		leaked := "3f9a1c0b7d2e4f6a8b1c3d5e7f9a0b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a" // a hex token sent as the end user
		secrets = append(secrets, leaked)
		e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root, Headers: map[string]string{"X-Service-End-User": child}})
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root, Headers: map[string]string{"X-Service-End-User": leaked}}), 200)
		until := closeHour(t, e)
		raw := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/audit-events?" + rangeQuery(since, until).Encode(), Key: root}), 200).Raw
		usage := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/usage?groupBy=key,operation,service,project", Key: root}), 200).Raw
		// What is at rest, too: every shard of the day and the counters.
		acct := keyOf(t, e, root).AccountID
		day := since.UTC().Format("20060102")
		var stored strings.Builder
		for _, pk := range []string{"aud#" + acct + "#" + day + "#0", "aud#" + acct + "#" + day + "#1", "aud#" + acct + "#" + day + "#2",
			"aud#" + acct + "#" + day + "#3", "use#" + acct + "#" + day} {
			page, err := e.Store.Query(context.Background(), store.Query{PK: pk, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				stored.WriteString(it.String(store.AttrDoc))
				stored.WriteString(string(it.Bytes(store.AttrDoc)))
				for name, v := range it {
					if s, ok := v.(string); ok {
						stored.WriteString(name + "=" + s + "\n")
					}
				}
			}
		}
		if !strings.Contains(stored.String(), "projects.list") || strings.Count(string(raw), `"requestId"`) < 4 {
			t.Fatalf("nothing was read back: %s\n%s", raw, stored.String())
		}
		for _, s := range secrets {
			for where, text := range map[string]string{"events": string(raw), "usage": string(usage), "stored": stored.String()} {
				if strings.Contains(text, s) {
					t.Errorf("%s holds %q", where, s)
				}
			}
		}
	})
}

func TestAKeySeesItselfAndItsDescendantsOnlyAndABoundKeyOnlyItsProject(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		since := e.Clock.Now()
		root, _ := e.RootKey(1, nil)
		prj := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "Alpha"}}), 201).Str("id")
		a, _ := e.Child(root, map[string]any{"label": "a"})
		a1, _ := e.Child(a, map[string]any{"label": "a1"})
		b, _ := e.Child(root, map[string]any{"label": "b"})
		bound, _ := e.Child(root, map[string]any{"label": "bound", "projectId": prj})
		ids := map[string]string{}
		for name, k := range map[string]string{"root": root, "a": a, "a1": a1, "b": b, "bound": bound} {
			ids[name] = keyOf(t, e, k).ID
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k}), 200)
		}
		// The root acting in the project, and a bound key refused for
		// naming another project: both are the project's.
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root, Headers: map[string]string{"X-Service-Project": prj}}), 200)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: bound, Headers: map[string]string{"X-Service-Project": "prj_other"}}), 403, "project_denied")
		other, _ := e.RootKey(1, nil)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: other}), 200)
		until := closeHour(t, e)

		keysOf := func(evs []map[string]any) []string {
			var out []string
			for _, ev := range evs {
				if k := ev["keyId"].(string); !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
			slices.Sort(out)
			return out
		}
		sorted := func(names ...string) []string {
			var out []string
			for _, n := range names {
				out = append(out, ids[n])
			}
			slices.Sort(out)
			return out
		}
		q := rangeQuery(since, until)
		for _, c := range []struct {
			viewer string
			key    string
			want   []string
		}{
			{"root", root, sorted("root", "a", "a1", "b", "bound")},
			{"a", a, sorted("a", "a1")},
			{"a1", a1, sorted("a1")},
			{"b", b, sorted("b")},
		} {
			if got := keysOf(listAll(t, e, c.key, q)); !slices.Equal(got, c.want) {
				t.Errorf("%s sees keys %v, want %v", c.viewer, got, c.want)
			}
		}
		// A sibling's events are invisible even when asked for by id.
		if evs := listAll(t, e, b, url.Values{"keyId": {ids["a"]}, "since": q["since"], "until": q["until"]}); len(evs) != 0 {
			t.Errorf("b sees a's events: %v", evs)
		}
		boundEvs := listAll(t, e, bound, q)
		if len(boundEvs) != 2 {
			t.Errorf("the bound key sees %d events, want its own 2", len(boundEvs))
		}
		for _, ev := range boundEvs {
			if ev["projectId"] != prj {
				t.Errorf("the bound key sees %v", ev)
			}
		}
		// The root selecting the project sees its project's events only:
		// its own request in it and the bound key's two.
		inProject := listAll(t, e, root, q, map[string]string{"X-Service-Project": prj})
		if len(inProject) != 3 {
			t.Errorf("root in the project sees %d events, want 3: %v", len(inProject), inProject)
		}
		for _, ev := range inProject {
			if ev["projectId"] != prj {
				t.Errorf("root in the project sees %v", ev)
			}
		}
		// Usage follows the same rule: a's view counts a and a1 only.
		u := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/usage?groupBy=key&bucketWidth=1h&start=" + url.QueryEscape(since.Format(time.RFC3339)) +
			"&end=" + url.QueryEscape(until.Format(time.RFC3339)), Key: a}), 200)
		var seen []string
		for _, bkt := range u.Body["data"].([]any) {
			for _, res := range bkt.(map[string]any)["results"].([]any) {
				seen = append(seen, res.(map[string]any)["keyId"].(string))
			}
		}
		slices.Sort(seen)
		if !slices.Equal(slices.Compact(seen), sorted("a", "a1")) {
			t.Errorf("a's usage covers keys %v", seen)
		}
		if evs := listAll(t, e, other, q); len(keysOf(evs)) != 1 || keysOf(evs)[0] == ids["root"] {
			t.Errorf("another account sees %v", keysOf(evs))
		}
	})
}
