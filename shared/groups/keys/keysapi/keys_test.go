package keysapi_test

import (
	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys"
	"platformapi/shared/harness/apitest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCreditTokenCreatesAFundedAccountWithARootKey(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		secret, rec := e.RootKey(25, nil)
		if !strings.HasPrefix(secret, "psk_") || rec.Body["depth"].(float64) != 1 || rec.Body["parentId"] != nil {
			t.Fatalf("root key = %s", rec.Raw)
		}
		if got := len(apitest.Strs(rec.Body["scopes"])); got != 28 {
			t.Fatalf("root key has %d scopes, want all 28", got)
		}
		bal := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: secret}), 200)
		if bal.Body["balance"].(float64) != 25 {
			t.Fatalf("balance = %s", bal.Raw)
		}
	})
}

func TestCreditTokenRedeemsOnceEvenUnderConcurrentRedemptions(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		tok := e.Token(10)
		const n = 16
		var wg sync.WaitGroup
		statuses := make([]int, n)
		codes := make([]string, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Idem: apitest.Idem(), Body: map[string]any{},
					Headers: map[string]string{"X-Service-Credit-Token": tok}})
				statuses[i], codes[i] = r.Status, r.Code()
			}(i)
		}
		wg.Wait()
		created := 0
		for i := range statuses {
			switch {
			case statuses[i] == 201:
				created++
			case statuses[i] == 401 && codes[i] == "invalid_credit_token":
			default:
				t.Errorf("redemption %d: %d %s", i, statuses[i], codes[i])
			}
		}
		if created != 1 {
			t.Fatalf("%d accounts created from one token, want 1", created)
		}
	})
}

func TestForgedExpiredOrMisplacedCreditTokensAreRefused(t *testing.T) {
	e := apitest.New(t)
	tok := e.Token(5)
	post := func(tok string, extra map[string]string) *apitest.Resp {
		h := map[string]string{"X-Service-Credit-Token": tok}
		for k, v := range extra {
			h[k] = v
		}
		return e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Idem: apitest.Idem(), Body: map[string]any{}, Headers: h})
	}
	e.Must(post(tok[:len(tok)-3]+"xyz", nil), 401, "invalid_credit_token")
	e.Must(post("not-a-token", nil), 401, "invalid_credit_token")
	e.Clock.Advance(2 * time.Hour)
	e.Must(post(tok, nil), 401, "invalid_credit_token")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Headers: map[string]string{"X-Service-Credit-Token": e.Token(1)}}), 400, "validation_failed")
}

// A token minted with another deployment's key (for the local server,
// another data directory's) is refused saying so; a forged one stays a
// plain refusal.
func TestACreditTokenOfAnotherDeploymentIsRefusedSayingSo(t *testing.T) {
	e := apitest.New(t)
	seed := make([]byte, 32)
	seed[0] = 7
	other, err := credittoken.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Mint(5_000_000, e.Clock.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	post := func(tok string) *apitest.Resp {
		return e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Idem: apitest.Idem(), Body: map[string]any{},
			Headers: map[string]string{"X-Service-Credit-Token": tok}})
	}
	if r := e.Must(post(foreign), 401, "invalid_credit_token"); !strings.Contains(r.Str("detail"), "minted for another deployment") {
		t.Fatalf("detail %q", r.Str("detail"))
	}
	tok := e.Token(5)
	if r := e.Must(post(tok[:len(tok)-3]+"xyz"), 401, "invalid_credit_token"); r.Str("detail") != "The credit token is forged, malformed or expired." {
		t.Fatalf("forged: detail %q", r.Str("detail"))
	}
}

func TestSecretIsShownOnlyAtCreationAndStoredHashed(t *testing.T) {
	e := apitest.New(t)
	secret, rec := e.RootKey(1, nil)
	if !strings.HasPrefix(secret, rec.Str("prefix")) || len(secret) < 40 {
		t.Fatalf("prefix %q is not a prefix of the secret", rec.Str("prefix"))
	}
	list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: secret}), 200)
	if strings.Contains(string(list.Raw), secret) || strings.Contains(string(list.Raw), `"secret"`) {
		t.Fatal("listing exposes the secret")
	}
	// Nothing in storage holds the secret itself.
	if at := e.Stored(store.Key{PK: "key#" + rec.Str("id"), SK: "key"}); strings.Contains(at, secret[len(rec.Str("prefix")):]) || !strings.Contains(at, "secretHash") {
		t.Fatal("the secret is stored in clear")
	}
}

// The rules of key creation (allow and exclude lists are exclusive, a child
// inherits its parent's service boundary, selectors resolve at creation),
// through the real router.
func TestKeyCreationRules(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	post := func(key string, body map[string]any) *apitest.Resp {
		return e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: key, Idem: apitest.Idem(), Body: body})
	}
	t.Run("Rule1AllowedAndExcludedServicesAreExclusive", func(t *testing.T) {
		e.Must(post(root, map[string]any{"allowedServices": []string{"cloud-superbrain"}, "excludedServices": []string{"core-research"}}), 400, "validation_failed")
		e.Must(post(root, map[string]any{"allowedOperations": []string{"projects.list"}, "excludedOperations": []string{"projects.create"}}), 400, "validation_failed")
	})
	t.Run("Rule2ChildInheritsTheParentServiceBoundary", func(t *testing.T) {
		p, prec := e.Child(root, map[string]any{"allowedServices": []string{"cloud-superbrain", "core-research"}})
		_, crec := e.Child(p, map[string]any{"label": "inherits"})
		if !slices.Equal(apitest.Strs(crec.Body["allowedServices"]), apitest.Strs(prec.Body["allowedServices"])) {
			t.Fatalf("child services %v, parent %v", crec.Body["allowedServices"], prec.Body["allowedServices"])
		}
		_, rrec := e.Child(root, map[string]any{})
		if rrec.Body["allowedServices"] != nil {
			t.Fatalf("child of an unbounded root must stay unbounded, got %v", rrec.Body["allowedServices"])
		}
	})
	t.Run("Rule2ExcludedServicesBecomeAnExplicitAllowlist", func(t *testing.T) {
		_, rec := e.Child(root, map[string]any{"excludedServices": []string{"managed-wallets", "managed-trading"}})
		got := apitest.Strs(rec.Body["allowedServices"])
		if len(got) != 7 || slices.Contains(got, "managed-wallets") || slices.Contains(got, "managed-trading") {
			t.Fatalf("allowedServices = %v", got)
		}
	})
	t.Run("Rule2EmptyAllowedServicesReachesNoServiceButKeepsOtherOperations", func(t *testing.T) {
		k, rec := e.Child(root, map[string]any{"allowedServices": []string{}})
		if got := apitest.Strs(rec.Body["allowedServices"]); len(got) != 0 || rec.Body["allowedServices"] == nil {
			t.Fatalf("allowedServices = %v", rec.Body["allowedServices"])
		}
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/wallets", Key: k}), 403, "service_denied")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k}), 200)
	})
	t.Run("Rule3And4SelectorsResolveToExactOperationsAtCreation", func(t *testing.T) {
		_, rec := e.Child(root, map[string]any{"allowedOperations": []string{"services.invoke.cloud-superbrain", "projects.list"}})
		got := apitest.Strs(rec.Body["allowedOperations"])
		want := []string{"projects.list", "services.invoke.cloud-superbrain.memory.delete", "services.invoke.cloud-superbrain.memory.list", "services.invoke.cloud-superbrain.memory.search", "services.invoke.cloud-superbrain.memory.write"}
		if !slices.Equal(got, want) {
			t.Fatalf("allowedOperations = %v, want %v", got, want)
		}
		_, rec = e.Child(root, map[string]any{"excludedOperations": []string{"apiKeys.revoke", "services.invoke.cloud-superbrain.memory.delete"}})
		got = apitest.Strs(rec.Body["allowedOperations"])
		if slices.Contains(got, "apiKeys.revoke") || slices.Contains(got, "services.invoke.cloud-superbrain.memory.delete") || !slices.Contains(got, "services.invoke.cloud-superbrain.memory.write") || !slices.Contains(got, "webhooks.create") {
			t.Fatalf("exclusion-derived allowedOperations = %v", got)
		}
	})
	t.Run("UnknownSelectorsScopesAndServicesAre400", func(t *testing.T) {
		for _, body := range []map[string]any{
			{"scopes": []string{"nope:read"}},
			{"allowedServices": []string{"nope"}},
			{"allowedOperations": []string{"services.invoke.cloud-superbrain.memory.nope"}},
			{"allowedOperations": []string{"nope.list"}},
			{"limits": map[string]any{"nope.list": map[string]any{"requestsPerMinute": 1}}},
			{"limits": map[string]any{"projects.list": map[string]any{"creditsPerDay": 5}}},
			{"limits": map[string]any{"projects.list": map[string]any{}}},
			{"expiresAt": e.Clock.Now().Add(-time.Minute).Format(time.RFC3339)},
			{"privacyTier": "secret"},
			{"projectId": "prj_01M8142SJ4P3055BQSZ1J8BYQY"},
		} {
			e.Must(post(root, body), 400, "validation_failed")
		}
	})
	t.Run("Rule5ANarrowWorkerKeyGetsExactlyItsSupportingOperations", func(t *testing.T) {
		w, rec := e.Child(root, map[string]any{
			"scopes":            []string{"services:invoke", "approvals:write"},
			"allowedServices":   []string{"cloud-superbrain"},
			"allowedOperations": []string{"services.invoke.cloud-superbrain.memory.delete", "approvals.create", "approvals.decide"},
		})
		want := []string{"approvals.create", "approvals.decide", "services.invoke.cloud-superbrain.memory.delete"}
		if got := apitest.Strs(rec.Body["allowedOperations"]); !slices.Equal(got, want) {
			t.Fatalf("allowedOperations = %v", got)
		}
		invoke := func(op string) *apitest.Resp {
			return e.Do(apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: w, Idem: apitest.Idem(), Body: map[string]any{"operationId": op, "input": map[string]any{}}})
		}
		e.Must(invoke("memory.write"), 403, "operation_denied")
		// The allowed capability passes operation access and stops at its approval.
		e.Must(invoke("memory.delete"), 403, "approval_required")
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/services/core-research/invoke", Key: w, Idem: apitest.Idem(), Body: map[string]any{"operationId": "research.query"}}), 403, "service_denied")
	})
	t.Run("Rule6SecretOnlyInTheCreateResponse", func(t *testing.T) {
		_, rec := e.Child(root, map[string]any{"label": "x"})
		if rec.Str("secret") == "" {
			t.Fatal("no secret in the create response")
		}
	})
}

// A child is never broader than its ancestors (docs/keys.md).
func TestDelegationNeverWidens(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	future := func(d time.Duration) string { return e.Clock.Now().Add(d).UTC().Format(time.RFC3339) }
	parent, _ := e.Child(root, map[string]any{
		"scopes":            []string{"api_keys:manage", "projects:read", "services:invoke"},
		"allowedServices":   []string{"cloud-superbrain"},
		"allowedOperations": []string{"apiKeys.create", "apiKeys.list", "projects.list", "services.invoke.cloud-superbrain.memory.write"},
		"expiresAt":         future(time.Hour),
		"privacyTier":       "pseudonymous",
		"limits":            map[string]any{"projects.list": map[string]any{"requestsPerMinute": 10}, "*": map[string]any{"maxConcurrent": 4}},
	})
	for name, tc := range map[string]map[string]any{
		"Rule1ScopeNotOnParent":           {"scopes": []string{"projects:write"}},
		"Rule2ServiceOutsideChain":        {"allowedServices": []string{"core-research"}},
		"Rule3OperationOutsideChain":      {"allowedOperations": []string{"projects.create"}},
		"Rule3CapabilityOutsideChain":     {"allowedOperations": []string{"services.invoke.cloud-superbrain.memory.delete"}},
		"Rule5ExpiryAfterAncestor":        {"expiresAt": future(2 * time.Hour)},
		"Rule6LooserPrivacyTier":          {"privacyTier": "standard"},
		"Rule7LimitAboveCoveringAncestor": {"limits": map[string]any{"projects.list": map[string]any{"requestsPerMinute": 11}}},
		"Rule7LimitAboveWildcardAncestor": {"limits": map[string]any{"apiKeys.list": map[string]any{"maxConcurrent": 5}}},
	} {
		t.Run(name, func(t *testing.T) {
			e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: parent, Idem: apitest.Idem(), Body: tc}), 403, "delegation_denied")
		})
	}
	t.Run("NarrowerChildInheritsEverythingElse", func(t *testing.T) {
		_, rec := e.Child(parent, map[string]any{"scopes": []string{"projects:read"}, "limits": map[string]any{"projects.list": map[string]any{"requestsPerMinute": 5}}})
		if rec.Str("privacyTier") != "pseudonymous" || rec.Body["expiresAt"] == nil || rec.Body["depth"].(float64) != 3 {
			t.Fatalf("child = %s", rec.Raw)
		}
		_, rec = e.Child(parent, map[string]any{"privacyTier": "minimal"})
		if rec.Str("privacyTier") != "minimal" {
			t.Fatalf("a stricter tier was not kept: %s", rec.Raw)
		}
	})
	t.Run("Rule8DelegationStopsAtEightLevels", func(t *testing.T) {
		k := root
		for depth := 2; depth <= 8; depth++ {
			var rec *apitest.Resp
			k, rec = e.Child(k, map[string]any{})
			if rec.Body["depth"].(float64) != float64(depth) {
				t.Fatalf("depth = %v, want %d", rec.Body["depth"], depth)
			}
		}
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: k, Idem: apitest.Idem(), Body: map[string]any{}}), 403, "delegation_denied")
	})
}

func TestProjectBoundKeysCannotChangeProjectOrWiden(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	a := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "a"}}), 201).Str("id")
	b := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "b"}}), 201).Str("id")
	bound, rec := e.Child(root, map[string]any{"projectId": a})
	if rec.Str("projectId") != a {
		t.Fatalf("projectId = %v", rec.Body["projectId"])
	}
	_, grand := e.Child(bound, map[string]any{})
	if grand.Str("projectId") != a {
		t.Fatal("a descendant of a project-bound key must inherit the project")
	}
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: bound, Idem: apitest.Idem(), Body: map[string]any{"projectId": b}}), 403, "delegation_denied")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects/" + b, Key: bound}), 404, "not_found")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects/" + a, Key: bound}), 200)
	list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: bound}), 200)
	if n := len(list.Body["data"].([]any)); n != 1 {
		t.Fatalf("a bound key lists %d projects, want only its own", n)
	}
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: bound, Headers: map[string]string{"X-Service-Project": b}}), 403, "project_denied")
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: bound, Idem: apitest.Idem(), Body: map[string]any{"name": "c"}}), 403, "project_denied")
}

// Revocation is immediate and covers the subtree.
func TestRevokingAKeyDisablesItsWholeSubtreeAtOnce(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		mid, midRec := e.Child(root, map[string]any{"label": "mid"})
		leaf, _ := e.Child(mid, map[string]any{"label": "leaf"})
		// Every copy of every key of the chain is read before (and so,
		// embedded, cached): the revocation must still act on the next request.
		for range 2 * keys.Replicas {
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: leaf}), 200)
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: mid}), 200)
		}
		rev := e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + midRec.Str("id"), Key: root, Idem: apitest.Idem()}), 200)
		if rev.Body["revokedAt"] == nil {
			t.Fatalf("revoke response = %s", rev.Raw)
		}
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: mid}), 401, "key_revoked")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: leaf}), 401, "key_revoked")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root}), 200)
		list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: root}), 200)
		for _, k := range list.Body["data"].([]any) {
			m := k.(map[string]any)
			if m["label"] == "leaf" && m["status"] != "revoked" {
				t.Fatalf("leaf under a revoked key listed as %v", m["status"])
			}
		}
	})
}

func TestExpiryOfAnAncestorDisablesItsSubtree(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	mid, _ := e.Child(root, map[string]any{"expiresAt": e.Clock.Now().Add(time.Hour).Format(time.RFC3339)})
	leaf, rec := e.Child(mid, map[string]any{})
	if rec.Body["expiresAt"] == nil {
		t.Fatal("a child must inherit its ancestor's expiry")
	}
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: leaf}), 200)
	e.Clock.Advance(time.Hour)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: mid}), 401, "key_expired")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: leaf}), 401, "key_expired")
}

func TestKeysSeeOnlyThemselvesAndTheirDescendants(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, rootRec := e.RootKey(10, nil)
		a, aRec := e.Child(root, map[string]any{"label": "a"})
		_, a1Rec := e.Child(a, map[string]any{"label": "a1"})
		b, bRec := e.Child(root, map[string]any{"label": "b"})
		other, _ := e.RootKey(10, nil)

		labels := func(key string) []string {
			var out []string
			for _, k := range e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: key}), 200).Body["data"].([]any) {
				out = append(out, k.(map[string]any)["label"].(string))
			}
			slices.Sort(out)
			return out
		}
		if got := labels(a); !slices.Equal(got, []string{"a", "a1"}) {
			t.Fatalf("a lists %v", got)
		}
		if got := labels(root); !slices.Equal(got, []string{"a", "a1", "b", "root"}) {
			t.Fatalf("root lists %v", got)
		}
		// A sibling branch, an ancestor and another account are invisible: 404.
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + aRec.Str("id"), Key: b, Idem: apitest.Idem()}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + a1Rec.Str("id"), Key: b, Idem: apitest.Idem()}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + rootRec.Str("id"), Key: a, Idem: apitest.Idem()}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + bRec.Str("id"), Key: other, Idem: apitest.Idem()}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/nonsense", Key: root, Idem: apitest.Idem()}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: b}), 200)
	})
}

func TestListingPagesWithCursor(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	for i := 0; i < 5; i++ {
		e.Child(root, map[string]any{})
	}
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		path := "/v1/api-keys?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: path, Key: root}), 200)
		for _, k := range r.Body["data"].([]any) {
			id := k.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("key %s listed twice", id)
			}
			seen[id] = true
		}
		if r.Body["nextCursor"] == nil {
			break
		}
		cursor = r.Body["nextCursor"].(string)
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if len(seen) != 6 {
		t.Fatalf("listed %d keys, want 6", len(seen))
	}
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys?limit=0", Key: root}), 400, "validation_failed")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys?limit=101", Key: root}), 400, "validation_failed")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys?cursor=%25%25", Key: root}), 400, "validation_failed")
}

// Rotation, end to end (docs/keys.md).
func TestRotationWalkthrough(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	old, oldRec := e.Child(root, map[string]any{"label": "svc-v1", "scopes": []string{"credits:read", "api_keys:manage"}})
	// 1–2. Create a new key with the same or narrower policy and store it.
	fresh, _ := e.Child(root, map[string]any{"label": "svc-v2", "scopes": []string{"credits:read", "api_keys:manage"}})
	// 3. Move traffic and verify.
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: fresh}), 200)
	// 4. Revoke the old key with a unique idempotency key; it is refused at once.
	e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + oldRec.Str("id"), Key: old, Idem: apitest.Idem()}), 200)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: old}), 401, "key_revoked")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: fresh}), 200)
}

func TestRequestsRacingARevokeAreRefusedOnceItAnswered(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		k, rec := e.Child(root, map[string]any{})
		var mu sync.Mutex
		var revokedAt time.Time
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					start := time.Now()
					r := e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k})
					mu.Lock()
					done := revokedAt
					mu.Unlock()
					if !done.IsZero() && start.After(done) && r.Status != 401 {
						t.Errorf("a request started after the revoke answered got %d", r.Status)
					}
				}
			}()
		}
		time.Sleep(50 * time.Millisecond)
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + rec.Str("id"), Key: root, Idem: apitest.Idem()}), 200)
		mu.Lock()
		revokedAt = time.Now()
		mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		close(stop)
		wg.Wait()
	})
}

func TestEndUserHeaderIsValidated(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root, Headers: map[string]string{"X-Service-End-User": "user:42@example"}}), 200)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root, Headers: map[string]string{"X-Service-End-User": strings.Repeat("u", 129)}}), 400, "validation_failed")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root, Headers: map[string]string{"X-Service-End-User": "has space"}}), 400, "validation_failed")
}

func TestScopesAreEnforcedOnEveryEndpoint(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	k, _ := e.Child(root, map[string]any{"scopes": []string{"projects:read"}})
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: k}), 200)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k}), 403, "scope_denied")
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: k, Idem: apitest.Idem(), Body: map[string]any{"name": "x"}}), 403, "scope_denied")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhooks", Key: k}), 403, "scope_denied")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys", Key: k}), 403, "scope_denied")
}

// A secret names its account and ancestors so that one batch read finds
// them; a secret whose ids were edited (to skip a revoked ancestor, or to
// point at another account) is not a valid key.
func TestSecretsWithEditedIdsAreInvalid(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	mid, _ := e.Child(root, map[string]any{})
	leaf, _ := e.Child(mid, map[string]any{})
	acct := leaf[len("psk_key_")+26+1+43+1 : len("psk_key_")+26+1+43+1+31]
	ancestors := leaf[len("psk_key_")+26+1+43+1+31:]
	if !strings.HasPrefix(acct, "acct_") || strings.Count(ancestors, "_key_") != 2 {
		t.Fatalf("secret layout changed: %s", leaf)
	}
	dropMid := strings.TrimSuffix(leaf, ancestors[len(ancestors)-31:])
	otherAccount := strings.Replace(leaf, acct, otherAccountID(t, e, root), 1)
	for name, secret := range map[string]string{"ancestor removed": dropMid, "account replaced": otherAccount, "ids appended": leaf + "_key_01M8142SJ4P3055BQSZ1J8BYQY"} {
		t.Run(name, func(t *testing.T) {
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: secret}), 401, "invalid_api_key")
		})
	}
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: leaf}), 200)
}

// otherAccountID returns an existing account id that is not root's.
func otherAccountID(t *testing.T, e *apitest.Env, root string) string {
	t.Helper()
	other, _ := e.RootKey(1, nil)
	start := len("psk_key_") + 26 + 1 + 43 + 1
	if other[start:start+31] == root[start:start+31] {
		t.Fatal("two accounts share an id")
	}
	return other[start : start+31]
}
