package keysapi_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/base/apitime"
	"platformapi/shared/harness/apitest"
)

func roll(e *apitest.Env, caller, id string, expiresAt time.Time) *apitest.Resp {
	return e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys/" + id + "/roll", Key: caller, Idem: apitest.Idem(),
		Body: map[string]any{"expiresAt": expiresAt.UTC().Format(time.RFC3339)}})
}

func TestARolledKeyAndItsSuccessorBothWorkUntilTheChosenExpiry(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, rootRec := e.RootKey(1, nil)
		policy := map[string]any{
			"label": "ci", "scopes": []string{"api_keys:manage", "projects:read"}, "allowedServices": []string{},
			"allowedIps": []string{"127.0.0.0/8"}, "notBefore": e.Clock.Now().Format(time.RFC3339),
			"expiresAt": e.Clock.Now().Add(30 * 24 * time.Hour).Format(time.RFC3339),
			"limits":    map[string]any{"*": map[string]any{"requestsPerMinute": 50}}, "privacyTier": "pseudonymous",
			"metadata": map[string]string{"team": "infra"},
		}
		old, oldRec := e.Child(root, policy)
		oldID := oldRec.Str("id")
		until := e.Clock.Now().Add(48 * time.Hour)
		r := e.Must(roll(e, old, oldID, until), 201)
		next, nextID := r.Str("secret"), r.Str("id")
		if !strings.HasPrefix(next, "psk_") || nextID == oldID || r.Str("rolledFrom") != oldID || r.Str("parentId") != rootRec.Str("id") {
			t.Fatalf("rolled: %s", r.Raw)
		}
		for _, f := range []string{"label", "scopes", "allowedServices", "allowedOperations", "allowedIps", "notBefore", "expiresAt", "limits", "privacyTier", "metadata", "projectId", "depth"} {
			if string(must(t, r.Body[f])) != string(must(t, oldRec.Body[f])) {
				t.Errorf("%s: successor %s, rolled key %s", f, must(t, r.Body[f]), must(t, oldRec.Body[f]))
			}
		}
		prev := r.Body["previousKey"].(map[string]any)
		if prev["id"] != oldID || prev["expiresAt"] != apitime.Format(until) || prev["rolledTo"] != nextID {
			t.Fatalf("previousKey = %v", prev)
		}
		if l := listed(e, root, oldID); l["expiresAt"] != apitime.Format(until) || l["rolledTo"] != nextID {
			t.Fatalf("listed rolled key = %v", l)
		}
		for _, k := range []string{old, next} {
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: k}), 200)
		}
		e.Clock.Advance(48*time.Hour - time.Second)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: old}), 200)
		e.Clock.Advance(time.Second)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: old}), 401, "key_expired")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: next}), 200)
		// A key rolls once.
		e.Must(roll(e, root, oldID, e.Clock.Now()), 409, "conflict")
	})
}

// must is v as JSON, to compare decoded fields.
func must(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRollExpiryIsBoundedToSevenDaysAndTheCurrentExpiry(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		_, rec := e.Child(root, map[string]any{"expiresAt": e.Clock.Now().Add(72 * time.Hour).Format(time.RFC3339)})
		id := rec.Str("id")
		_, unbounded := e.Child(root, map[string]any{})
		now := e.Clock.Now()
		for name, tc := range map[string]struct {
			id string
			at time.Time
		}{
			"more than 7 days ahead":        {unbounded.Str("id"), now.Add(7*24*time.Hour + time.Second)},
			"in the past":                   {id, now.Add(-time.Second)},
			"later than the current expiry": {id, now.Add(72*time.Hour + time.Second)},
		} {
			r := e.Must(roll(e, root, tc.id, tc.at), 400, "validation_failed")
			if !strings.Contains(string(r.Raw), "body.expiresAt") {
				t.Errorf("%s: %s", name, r.Raw)
			}
		}
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys/" + id + "/roll", Key: root, Idem: apitest.Idem(), Body: map[string]any{}}), 400, "validation_failed")
		e.Must(roll(e, root, unbounded.Str("id"), now.Add(7*24*time.Hour)), 201)
		e.Must(roll(e, root, id, now), 201) // expiring now: the roll revokes at once
	})
}

func TestOnlyTheKeyOrAnAncestorCanRollIt(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		a, aRec := e.Child(root, map[string]any{})
		b, bRec := e.Child(root, map[string]any{})
		other, _ := e.RootKey(1, nil)
		at := e.Clock.Now().Add(time.Hour)
		e.Must(roll(e, b, aRec.Str("id"), at), 404, "not_found")
		e.Must(roll(e, other, aRec.Str("id"), at), 404, "not_found")
		child, childRec := e.Child(a, map[string]any{})
		// A descendant may not roll its ancestor.
		e.Must(roll(e, child, aRec.Str("id"), at), 404, "not_found")
		e.Must(roll(e, a, childRec.Str("id"), at), 201)
		e.Must(roll(e, b, bRec.Str("id"), at), 201)
		// A revoked key cannot be rolled back to life.
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + aRec.Str("id"), Key: root, Idem: apitest.Idem()}), 200)
		e.Must(roll(e, root, aRec.Str("id"), at), 409, "conflict")
	})
}

func TestARootKeyRollsIntoANewRootOfTheSameAccount(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, rec := e.RootKey(5, nil)
		r := e.Must(roll(e, root, rec.Str("id"), e.Clock.Now().Add(time.Hour)), 201)
		if r.Body["parentId"] != nil || r.Body["depth"].(float64) != 1 {
			t.Fatalf("rolled root: %s", r.Raw)
		}
		if e.Balance(r.Str("secret")) != 5 {
			t.Fatal("the successor sees another account")
		}
	})
}

func TestWebhooksOfARolledKeyKeepWorkingUnderItsSuccessor(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		old, oldRec := e.Child(root, map[string]any{})
		hook := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: old, Idem: apitest.Idem(),
			Body: map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"api_key.created"}}}), 201)
		hookID := hook.Str("id")
		r := e.Must(roll(e, old, oldRec.Str("id"), e.Clock.Now().Add(time.Hour)), 201)
		next, nextID := r.Str("secret"), r.Str("id")
		e.Clock.Advance(time.Hour)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhooks", Key: old}), 401, "key_expired")

		list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhooks", Key: next}), 200)
		data := list.Body["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["id"] != hookID || data[0].(map[string]any)["createdByKeyId"] != nextID {
			t.Fatalf("the successor lists %s", list.Raw)
		}
		e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/webhooks/" + hookID, Key: next, Idem: apitest.Idem(),
			Body: map[string]any{"description": "managed by the successor"}}), 200)
		// The rolled key has expired, yet the webhook still hears events.
		e.Child(next, map[string]any{})
		ds := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhook-deliveries?webhookId=" + hookID, Key: next}), 200)
		if n := len(ds.Body["data"].([]any)); n != 1 {
			t.Fatalf("%d deliveries after the rolled key expired, want 1: %s", n, ds.Raw)
		}
	}, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
}

func TestConcurrentRollsOfOneKeyMakeOneSuccessor(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		_, rec := e.Child(root, map[string]any{})
		const n = 6
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = roll(e, root, rec.Str("id"), e.Clock.Now().Add(time.Hour)).Status
			}()
		}
		wg.Wait()
		rolled := 0
		for _, s := range statuses {
			switch s {
			case 201:
				rolled++
			case 409:
			default:
				t.Errorf("status %d", s)
			}
		}
		page := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys?limit=100", Key: root}), 200)
		if keys := len(page.Body["data"].([]any)); rolled != 1 || keys != 3 {
			t.Fatalf("%d rolls answered 201 and %d keys exist, want 1 and 3 (root, rolled, successor)", rolled, keys)
		}
	})
}
