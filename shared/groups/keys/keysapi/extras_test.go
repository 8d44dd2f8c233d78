package keysapi_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"platformapi/shared/base/apitime"
	"platformapi/shared/groups/keys"
	"platformapi/shared/harness/apitest"
)

// The test server listens on 127.0.0.1: that is the client address.

func listed(e *apitest.Env, key, id string) map[string]any {
	e.T.Helper()
	page := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys?limit=100", Key: key}), 200)
	for _, it := range page.Body["data"].([]any) {
		if m := it.(map[string]any); m["id"] == id {
			return m
		}
	}
	e.T.Fatalf("key %s not listed: %s", id, page.Raw)
	return nil
}

func createKey(e *apitest.Env, parent string, body map[string]any) *apitest.Resp {
	return e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: parent, Idem: apitest.Idem(), Body: body})
}

func TestAKeyIsUsableOnlyFromItsAllowedIPs(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		elsewhere, rec := e.Child(root, map[string]any{"allowedIps": []string{"10.0.0.0/8"}})
		if got := apitest.Strs(rec.Body["allowedIps"]); len(got) != 1 || got[0] != "10.0.0.0/8" {
			t.Fatalf("allowedIps = %s", rec.Raw)
		}
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: elsewhere}), 403, "ip_denied")
		// A client-supplied X-Forwarded-For is never believed.
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: elsewhere, Headers: map[string]string{"X-Forwarded-For": "10.1.2.3"}}), 403, "ip_denied")

		local, _ := e.Child(root, map[string]any{"allowedIps": []string{"127.0.0.0/8", "2001:db8::/32"}})
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: local}), 200)
		// A child of a denied key inherits the list, and with it the denial.
		e.Must(createKey(e, elsewhere, map[string]any{}), 403, "ip_denied")
		grandchild, rec := e.Child(local, map[string]any{"label": "inherits"})
		if got := apitest.Strs(rec.Body["allowedIps"]); len(got) != 2 {
			t.Fatalf("inherited allowedIps = %s", rec.Raw)
		}
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: grandchild}), 200)
		if listed(e, root, rec.Str("id"))["allowedIps"] == nil {
			t.Fatal("allowedIps not listed")
		}
	})
}

func TestAChildCannotWidenItsParentsAllowedIPs(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		parent, _ := e.Child(root, map[string]any{"allowedIps": []string{"127.0.0.0/8", "2001:db8::/32"}})
		for _, tc := range []struct {
			name string
			ips  []string
			want int
		}{
			{"everything", []string{"0.0.0.0/0"}, 403},
			{"a wider v4 network", []string{"127.0.0.0/7"}, 403},
			{"one network outside", []string{"127.0.0.1/32", "10.0.0.1"}, 403},
			{"a wider v6 network", []string{"2001:db8::/31"}, 403},
			{"every v6 address", []string{"::/0"}, 403},
			{"a narrower v4 network", []string{"127.0.0.0/24"}, 201},
			{"a single address", []string{"127.0.0.1"}, 201},
			{"a narrower v6 network", []string{"2001:db8:1::/48"}, 201},
		} {
			r := createKey(e, parent, map[string]any{"allowedIps": tc.ips})
			if r.Status != tc.want || tc.want == 403 && r.Code() != "delegation_denied" {
				t.Errorf("%s %v: %d %s", tc.name, tc.ips, r.Status, r.Raw)
			}
		}
	})
}

func TestAllowedIPsAreValidatedAndNormalised(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		many := make([]string, 65)
		for i := range many {
			many[i] = fmt.Sprintf("10.0.%d.0/24", i)
		}
		for _, bad := range [][]string{{}, {"10.0.0.0/33"}, {"2001:db8::/129"}, {"2001:db8:::/32"}, {"fe80::1%eth0"}, {"localhost"}, many} {
			r := e.Must(createKey(e, root, map[string]any{"allowedIps": bad}), 400, "validation_failed")
			if !strings.Contains(string(r.Raw), "body.allowedIps") {
				t.Errorf("%v: no field error on allowedIps: %s", bad, r.Raw)
			}
		}
		_, rec := e.Child(root, map[string]any{"allowedIps": []string{"10.1.2.3/8", "2001:DB8:0::1/32", "::ffff:192.0.2.1/120", "10.0.0.0/8"}})
		got := apitest.Strs(rec.Body["allowedIps"])
		want := []string{"10.0.0.0/8", "192.0.2.0/24", "2001:db8::/32"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("allowedIps = %v, want %v", got, want)
		}
	})
}

func TestAKeyIsNotValidBeforeItsNotBefore(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		start := e.Clock.Now().Add(time.Hour)
		later, rec := e.Child(root, map[string]any{"notBefore": start.Format(time.RFC3339)})
		if rec.Str("notBefore") != apitime.Format(start) {
			t.Fatalf("notBefore = %s", rec.Raw)
		}
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: later}), 401, "key_not_yet_valid")
		if r.Header.Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
		e.Clock.Advance(59 * time.Minute)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: later}), 401, "key_not_yet_valid")
		e.Clock.Advance(time.Minute)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: later}), 200)
	})
}

func TestAChildCannotStartBeforeItsAncestors(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		start := e.Clock.Now().Add(time.Hour)
		parent, _ := e.Child(root, map[string]any{"notBefore": start.Format(time.RFC3339)})
		e.Clock.Advance(time.Hour)
		e.Must(createKey(e, parent, map[string]any{"notBefore": start.Add(-time.Second).Format(time.RFC3339)}), 403, "delegation_denied")
		_, rec := e.Child(parent, map[string]any{})
		if rec.Str("notBefore") != apitime.Format(start) {
			t.Fatalf("the child does not inherit notBefore: %s", rec.Raw)
		}
		_, rec = e.Child(parent, map[string]any{"notBefore": start.Add(time.Minute).Format(time.RFC3339)})
		if rec.Str("notBefore") != apitime.Format(start.Add(time.Minute)) {
			t.Fatalf("a later start: %s", rec.Raw)
		}
		exp := e.Clock.Now().Add(2 * time.Hour)
		e.Must(createKey(e, parent, map[string]any{"notBefore": exp.Format(time.RFC3339), "expiresAt": exp.Format(time.RFC3339)}), 400, "validation_failed")
	})
}

// lastUsedAtWrites counts the store writes of the lastUsedAt attribute.
func lastUsedAtWrites(e *apitest.Env) int {
	n := 0
	for _, w := range e.Writes() {
		if bytes.Equal(w, []byte("lastUsedAt")) {
			n++
		}
	}
	return n
}

func TestLastUsedAtIsWrittenAtMostOnceAMinute(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		key, rec := e.Child(root, map[string]any{})
		id := rec.Str("id")
		if listed(e, root, id)["lastUsedAt"] != nil {
			t.Fatal("an unused key has a lastUsedAt")
		}
		before := lastUsedAtWrites(e)
		used := e.Clock.Now()
		for range 5 {
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: key}), 200)
			e.Clock.Advance(10 * time.Second)
		}
		// One write of the record and each of its copies, together.
		if n := lastUsedAtWrites(e) - before; n != keys.Replicas {
			t.Fatalf("%d lastUsedAt writes for 5 requests within a minute, want one per copy (%d)", n, keys.Replicas)
		}
		if got := listed(e, root, id)["lastUsedAt"]; got != apitime.Format(used) {
			t.Fatalf("lastUsedAt = %v, want %s", got, apitime.Format(used))
		}
		e.Clock.Advance(11 * time.Second) // a minute after the first use
		again := e.Clock.Now()
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: key}), 200)
		if n := lastUsedAtWrites(e) - before; n != 2*keys.Replicas {
			t.Fatalf("%d lastUsedAt writes after a minute, want two of every copy (%d)", n, 2*keys.Replicas)
		}
		if got := listed(e, root, id)["lastUsedAt"]; got != apitime.Format(again) {
			t.Fatalf("lastUsedAt = %v, want %s", got, apitime.Format(again))
		}
		// A refused request is no use of the key.
		denied, rec := e.Child(root, map[string]any{"allowedIps": []string{"10.0.0.0/8"}})
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: denied}), 403, "ip_denied")
		if listed(e, root, rec.Str("id"))["lastUsedAt"] != nil {
			t.Fatal("a denied request recorded a use")
		}
	})
}

func TestMetadataIsBoundedAndListed(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		seventeen := map[string]string{}
		for i := range 17 {
			seventeen[fmt.Sprintf("k%d", i)] = "v"
		}
		for name, md := range map[string]map[string]string{
			"17 pairs":          seventeen,
			"a 41-char key":     {strings.Repeat("k", 41): "v"},
			"an empty key":      {"": "v"},
			"a key with spaces": {"a b": "v"},
			"a 257-char value":  {"k": strings.Repeat("é", 257)},
		} {
			r := e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: root, Idem: apitest.Idem(), Body: map[string]any{"metadata": md}})
			if r.Status != 400 || r.Code() != "validation_failed" || !strings.Contains(string(r.Raw), "body.metadata") {
				t.Errorf("%s: %d %s", name, r.Status, r.Raw)
			}
		}
		sixteen := map[string]string{strings.Repeat("k", 40): strings.Repeat("é", 256)}
		for i := range 15 {
			sixteen[fmt.Sprintf("team.%d_x-y", i)] = "v"
		}
		child, rec := e.Child(root, map[string]any{"metadata": sixteen})
		got := listed(e, root, rec.Str("id"))["metadata"].(map[string]any)
		if len(got) != 16 || got[strings.Repeat("k", 40)] != strings.Repeat("é", 256) {
			t.Fatalf("listed metadata = %v", got)
		}
		// Not inherited: metadata is the creator's label, not policy.
		_, rec = e.Child(child, map[string]any{})
		if md, _ := rec.Body["metadata"].(map[string]any); len(md) != 0 {
			t.Fatalf("a child inherited metadata: %s", rec.Raw)
		}
	})
}
