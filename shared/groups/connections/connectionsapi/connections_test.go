package connectionsapi_test

import (
	"strings"
	"testing"
	"time"

	"platformapi/shared/harness/apitest"
)

// A connection's life over HTTP: created, read, listed, relabelled,
// rotated, disabled and enabled, deleted; afterwards 404.
func TestConnectionLifecycleOverHTTP(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		c := e.Must(create(e, root, nil, map[string]any{"label": "vendor", "type": "api_key", "serviceIds": []string{"core-research", "core-research"},
			"credentials": map[string]any{"key": "key-first-0123456789", "headerName": "X-Vendor-Key"}, "metadata": map[string]string{"team": "data"}}), 201)
		id := c.Str("id")
		if !strings.HasPrefix(id, "con_") || c.Str("status") != "active" || c.Str("type") != "api_key" || c.Body["credentialVersion"].(float64) != 1 ||
			c.Str("credentialHint") != "6789" || c.Body["projectId"] != nil || c.Body["rotatedAt"] != nil || c.Body["lastUsedAt"] != nil ||
			c.Body["statusReason"] != nil || strings.Join(apitest.Strs(c.Body["serviceIds"]), ",") != "core-research" || c.Body["credentials"] != nil {
			t.Fatalf("created %s", c.Raw)
		}
		read := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections/" + id, Key: root}), 200)
		if read.Str("id") != id || read.Body["metadata"].(map[string]any)["team"] != "data" {
			t.Fatalf("read %s", read.Raw)
		}
		list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections", Key: root}), 200)
		if data := list.Body["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id || list.Body["nextCursor"] != nil {
			t.Fatalf("list %s", list.Raw)
		}

		e.Clock.Advance(time.Minute)
		relabelled := e.Must(patch(e, root, id, nil, map[string]any{"label": "renamed"}), 200)
		if relabelled.Str("label") != "renamed" || relabelled.Body["credentialVersion"].(float64) != 1 {
			t.Fatalf("relabelled %s", relabelled.Raw)
		}
		rotated := e.Must(patch(e, root, id, nil, map[string]any{"credentials": map[string]any{"key": "key-second-01234ABCD"}}), 200)
		if rotated.Body["credentialVersion"].(float64) != 2 || rotated.Str("credentialHint") != "ABCD" || rotated.Str("rotatedAt") == "" {
			t.Fatalf("rotated %s", rotated.Raw)
		}
		disabled := e.Must(patch(e, root, id, nil, map[string]any{"status": "disabled"}), 200)
		if disabled.Str("status") != "disabled" || disabled.Str("disabledAt") == "" {
			t.Fatalf("disabled %s", disabled.Raw)
		}
		enabled := e.Must(patch(e, root, id, nil, map[string]any{"status": "active"}), 200)
		if enabled.Str("status") != "active" || enabled.Body["disabledAt"] != nil {
			t.Fatalf("enabled %s", enabled.Raw)
		}
		deleted := e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/connections/" + id, Key: root, Idem: apitest.Idem()}), 200)
		if deleted.Str("id") != id {
			t.Fatalf("deleted %s", deleted.Raw)
		}
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections/" + id, Key: root}), 404, "not_found")
		e.Must(patch(e, root, id, nil, map[string]any{"label": "x"}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/connections/" + id, Key: root, Idem: apitest.Idem()}), 404, "not_found")
		if data := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections", Key: root}), 200).Body["data"].([]any); len(data) != 0 {
			t.Fatalf("listed after delete: %v", data)
		}
	})
}

func TestEveryRequestRuleIsEnforced(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		ok := func() map[string]any { return bearer("tok-0123456789abcdef") }
		with := func(k string, v any) map[string]any { b := ok(); b[k] = v; return b }
		without := func(k string) map[string]any { b := ok(); delete(b, k); return b }
		for _, tc := range []struct {
			name string
			body map[string]any
		}{
			{"no label", without("label")},
			{"empty label", with("label", "")},
			{"label too long", with("label", strings.Repeat("l", 129))},
			{"unknown type", with("type", "password")},
			{"no credentials", without("credentials")},
			{"credentials not an object", with("credentials", "tok-0123456789abcdef")},
			{"credentials of another type", with("credentials", map[string]any{"key": "k-0123456789"})},
			{"an unknown credentials field", with("credentials", map[string]any{"token": "t-0123456789", "extra": "x"})},
			{"a secret with a control character", with("credentials", map[string]any{"token": "t-0123\n456789"})},
			{"a basic username with a colon", map[string]any{"label": "b", "type": "basic", "serviceIds": []string{"core-research"}, "credentials": map[string]any{"username": "a:b", "password": "p"}}},
			{"an api key in a reserved header", map[string]any{"label": "k", "type": "api_key", "serviceIds": []string{"core-research"}, "credentials": map[string]any{"key": "k", "headerName": "Host"}}},
			{"an oauth2 token URL over http", map[string]any{"label": "o", "type": "oauth2", "serviceIds": []string{"core-research"}, "credentials": map[string]any{"accessToken": "a", "tokenUrl": "http://auth.example.com/t"}}},
			{"no services", with("serviceIds", []string{})},
			{"an unknown service", with("serviceIds", []string{"nope"})},
			{"too much metadata", with("metadata", func() map[string]string {
				m := map[string]string{}
				for i := range 17 {
					m[strings.Repeat("k", i+1)] = "v"
				}
				return m
			}())},
			{"an unknown field", with("secret", "x")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e.Must(create(e, root, nil, tc.body), 400, "validation_failed")
			})
		}
		id := e.Must(create(e, root, nil, ok()), 201).Str("id")
		for _, tc := range []struct {
			name string
			body map[string]any
		}{
			{"nothing to change", map[string]any{}},
			{"an unknown status", map[string]any{"status": "paused"}},
			{"credentials of another type", map[string]any{"credentials": map[string]any{"password": "p"}}},
			{"an empty label", map[string]any{"label": ""}},
		} {
			t.Run("patch "+tc.name, func(t *testing.T) {
				e.Must(patch(e, root, id, nil, tc.body), 400, "validation_failed")
			})
		}
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections?limit=0", Key: root}), 400, "validation_failed")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections?limit=101", Key: root}), 400, "validation_failed")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections?cursor=%21%21", Key: root}), 400, "validation_failed")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections/con_nope", Key: root}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/connections", Key: root, Body: ok()}), 400, "idempotency_key_required")
		reader, _ := e.Child(root, map[string]any{"scopes": []string{"connections:read"}})
		e.Must(create(e, reader, nil, ok()), 403, "scope_denied")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections/" + id, Key: reader}), 200)
	})
}

func TestListPagesNewestFirst(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		var made []string
		for range 3 {
			made = append(made, e.Must(create(e, root, nil, bearer("tok-0123456789abcdef")), 201).Str("id"))
			e.Clock.Advance(time.Millisecond)
		}
		var got []string
		cursor := ""
		for range 3 {
			r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections?limit=2&cursor=" + cursor, Key: root}), 200)
			for _, d := range r.Body["data"].([]any) {
				got = append(got, d.(map[string]any)["id"].(string))
			}
			if r.Body["nextCursor"] == nil {
				break
			}
			cursor = r.Body["nextCursor"].(string)
		}
		if strings.Join(got, ",") != strings.Join([]string{made[2], made[1], made[0]}, ",") {
			t.Fatalf("pages %v, want newest first of %v", got, made)
		}
	})
}

// A connection of another project, or at account level for a project
// caller, or of another account, does not exist for the caller: reading,
// changing, invoking and running with it are all 404.
func TestAConnectionOfAnotherScopeIsNotFound(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		serve(e, 200)
		root, _ := e.RootKey(10, nil)
		prj, other := project(e, root, "one"), project(e, root, "two")
		inPrj := map[string]string{"X-Service-Project": prj}
		id := e.Must(create(e, root, inPrj, bearer("tok-0123456789abcdef")), 201).Str("id")
		if got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections/" + id, Key: root, Headers: inPrj}), 200); got.Str("projectId") != prj {
			t.Fatalf("projectId %s", got.Raw)
		}
		bound, _ := e.Child(root, map[string]any{"projectId": other})
		stranger, _ := e.RootKey(10, nil)
		for _, tc := range []struct {
			name    string
			key     string
			headers map[string]string
		}{
			{"another project selected", root, map[string]string{"X-Service-Project": other}},
			{"a key bound to another project", bound, nil},
			{"account level", root, nil},
			{"another account", stranger, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections/" + id, Key: tc.key, Headers: tc.headers}), 404, "not_found")
				e.Must(patch(e, tc.key, id, tc.headers, map[string]any{"status": "disabled"}), 404, "not_found")
				e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/connections/" + id, Key: tc.key, Idem: apitest.Idem(), Headers: tc.headers}), 404, "not_found")
				e.Must(invoke(e, tc.key, tc.headers, map[string]string{"vendor": id}), 404, "not_found")
				e.Must(createRun(e, tc.key, tc.headers, map[string]string{"vendor": id}), 404, "not_found")
				if data := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections", Key: tc.key, Headers: tc.headers}), 200).Body["data"].([]any); len(data) != 0 {
					t.Fatalf("listed: %v", data)
				}
			})
		}
		e.Must(invoke(e, root, inPrj, map[string]string{"vendor": id}), 200)
	})
}

// Invoke and runs refuse a disabled connection (409) and one that does not
// list the service (403), before anything is charged or sent.
func TestADisabledOrUnlistedConnectionIsRefused(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		calls := serve(e, 200)
		root, _ := e.RootKey(10, nil)
		disabled := e.Must(create(e, root, nil, bearer("tok-0123456789abcdef")), 201).Str("id")
		e.Must(patch(e, root, disabled, nil, map[string]any{"status": "disabled"}), 200)
		unlisted := e.Must(create(e, root, nil, bearer("tok-0123456789abcdef", "managed-agents")), 201).Str("id")
		e.Must(invoke(e, root, nil, map[string]string{"vendor": disabled}), 409, "connection_disabled")
		e.Must(createRun(e, root, nil, map[string]string{"vendor": disabled}), 409, "connection_disabled")
		e.Must(invoke(e, root, nil, map[string]string{"vendor": unlisted}), 403, "connection_not_allowed")
		e.Must(createRun(e, root, nil, map[string]string{"vendor": unlisted}), 403, "connection_not_allowed")
		if n := len(calls.all()); n != 0 || e.Balance(root) != 10 {
			t.Fatalf("%d calls reached the service, balance %v", n, e.Balance(root))
		}
		// Enabled again, it works, and the run created before a disable
		// fails when it executes, uncharged.
		e.Must(patch(e, root, disabled, nil, map[string]any{"status": "active"}), 200)
		e.Must(invoke(e, root, nil, map[string]string{"vendor": disabled}), 200)
		run := e.Must(createRun(e, root, nil, map[string]string{"vendor": disabled}), 202)
		if got := run.Body["connections"].(map[string]any)["vendor"]; got != disabled {
			t.Fatalf("run connections %s", run.Raw)
		}
		e.Must(patch(e, root, disabled, nil, map[string]any{"status": "disabled"}), 200)
		before := e.Balance(root)
		failed := e.WaitRun(root, run.Str("id"))
		if failed.Str("status") != "failed" || failed.Body["error"].(map[string]any)["code"] != "connection_disabled" || e.Balance(root) != before {
			t.Fatalf("run %s", failed.Raw)
		}
	})
}

// The cloud-superbrain service runs in process and needs no connections;
// a call to it naming none is unchanged.
func TestBuiltinServicesNeedNoConnections(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"operationId": "memory.write", "input": map[string]any{"text": "hello"}}}), 200)
}

// A 401 from the service to a call carrying connections marks them
// (statusReason upstream_unauthorized), charges nothing, and is not retried
// by a run; a rotation clears the mark.
func TestA401FromTheServiceMarksTheConnections(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		calls := serve(e, 401)
		root, _ := e.RootKey(10, nil)
		id := e.Must(create(e, root, nil, bearer("tok-0123456789abcdef")), 201).Str("id")
		e.Must(invoke(e, root, nil, map[string]string{"vendor": id}), 409, "conflict")
		got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections/" + id, Key: root}), 200)
		if got.Str("statusReason") != "upstream_unauthorized" || got.Str("status") != "active" || got.Str("lastUsedAt") == "" || e.Balance(root) != 10 {
			t.Fatalf("after a 401: %s, balance %v", got.Raw, e.Balance(root))
		}
		e.Must(patch(e, root, id, nil, map[string]any{"credentials": map[string]any{"token": "tok-fresh-0123456789"}}), 200)
		if got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections/" + id, Key: root}), 200); got.Body["statusReason"] != nil {
			t.Fatalf("rotation kept the mark: %s", got.Raw)
		}
		n := len(calls.all())
		run := e.WaitRun(root, e.Must(createRun(e, root, nil, map[string]string{"vendor": id}), 202).Str("id"))
		if run.Str("status") != "failed" || run.Body["attempts"].(float64) != 1 || len(calls.all()) != n+1 || e.Balance(root) != 10 {
			t.Fatalf("run after a 401: %s, %d calls", run.Raw, len(calls.all())-n)
		}
		if got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/connections/" + id, Key: root}), 200); got.Str("statusReason") != "upstream_unauthorized" {
			t.Fatalf("the run's 401 did not mark it: %s", got.Raw)
		}
	})
}

// A run created before a rotation executes with the credentials it was
// created with while the rotation keeps them (24 hours); after that, with
// the current ones.
func TestARunCreatedBeforeARotationUsesThePreviousVersionFor24Hours(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration
		want  string
	}{
		{"within 24 hours", 24*time.Hour - time.Minute, "Bearer tok-first-0123456789"},
		{"after 24 hours", 24 * time.Hour, "Bearer tok-second-0123456789"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
				calls := serve(e, 200)
				root, _ := e.RootKey(10, nil)
				id := e.Must(create(e, root, nil, bearer("tok-first-0123456789")), 201).Str("id")
				run := e.Must(createRun(e, root, nil, map[string]string{"vendor": id}), 202).Str("id")
				e.Must(patch(e, root, id, nil, map[string]any{"credentials": map[string]any{"token": "tok-second-0123456789"}}), 200)
				e.Clock.Advance(tc.after)
				if got := e.WaitRun(root, run); got.Str("status") != "succeeded" {
					t.Fatalf("run %s", got.Raw)
				}
				if got := calls.last(t).Get("Authorization"); got != tc.want {
					t.Fatalf("the service received %q, want %q", got, tc.want)
				}
				e.Must(invoke(e, root, nil, map[string]string{"vendor": id}), 200)
				if got := calls.last(t).Get("Authorization"); got != "Bearer tok-second-0123456789" {
					t.Fatalf("an invoke after the rotation sent %q", got)
				}
			})
		})
	}
}
