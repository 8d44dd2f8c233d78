package keys_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/keys"
)

var now = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func projects(ids ...string) keys.ProjectCheck {
	return func(id string) bool { return slices.Contains(ids, id) }
}

// build makes a chain: a first key from root, then a child per request.
func build(t *testing.T, reqs ...keys.CreateKeyRequest) []*keys.Key {
	t.Helper()
	var chain []*keys.Key
	for i, req := range reqs {
		k, err := keys.Build(chain, "acct_test", req, now, projects("proj_a", "proj_b"))
		if err != nil {
			t.Fatalf("building chain key %d: %v", i, err)
		}
		chain = append(chain, k)
	}
	return chain
}

// codeOf is the apierr code of err, "" for nil.
func codeOf(t *testing.T, err error) apierr.Code {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *apierr.Error", err)
	}
	return e.Code
}

// TestAChildIsNeverBroaderThanItsAncestors is the delegation rules of
// docs/keys.md as a table:
// each parent chain and child request either yields the child described or
// is refused with the code named.
func TestAChildIsNeverBroaderThanItsAncestors(t *testing.T) {
	later, sooner := now.Add(48*time.Hour), now.Add(24*time.Hour)
	for _, tc := range []struct {
		name   string
		chain  []keys.CreateKeyRequest
		req    keys.CreateKeyRequest
		code   apierr.Code
		verify func(t *testing.T, k *keys.Key)
	}{
		{name: "a first key holds every scope and no boundary", verify: func(t *testing.T, k *keys.Key) {
			if !slices.Equal(k.Scopes, keys.Scopes) || k.AllowedServices != nil || k.AllowedOperations != nil || k.Depth != 1 {
				t.Fatalf("first key = %+v", k)
			}
		}},
		{name: "a child inherits the parent's boundary",
			chain: []keys.CreateKeyRequest{{}, {Scopes: []string{"projects:read"}, AllowedServices: []string{"cloud-superbrain"}, ExpiresAt: &later, PrivacyTier: keys.TierMinimal}},
			verify: func(t *testing.T, k *keys.Key) {
				if !slices.Equal(k.Scopes, []string{"projects:read"}) || !slices.Equal(k.AllowedServices, []string{"cloud-superbrain"}) || !k.ExpiresAt.Equal(later) || k.PrivacyTier != keys.TierMinimal || k.Depth != 3 {
					t.Fatalf("child = %+v", k)
				}
			}},
		{name: "a scope the parent lacks is denied",
			chain: []keys.CreateKeyRequest{{}, {Scopes: []string{"projects:read"}}},
			req:   keys.CreateKeyRequest{Scopes: []string{"projects:write"}}, code: apierr.DelegationDenied},
		{name: "requested scopes are deduplicated and sorted",
			chain: []keys.CreateKeyRequest{{}},
			req:   keys.CreateKeyRequest{Scopes: []string{"runs:read", "credits:read", "runs:read"}},
			verify: func(t *testing.T, k *keys.Key) {
				if !slices.Equal(k.Scopes, []string{"credits:read", "runs:read"}) {
					t.Fatalf("scopes = %v", k.Scopes)
				}
			}},
		{name: "an unknown scope is a validation failure",
			req: keys.CreateKeyRequest{Scopes: []string{"root:all"}}, code: apierr.ValidationFailed},
		{name: "a service outside the parent's allowlist is denied",
			chain: []keys.CreateKeyRequest{{}, {AllowedServices: []string{"cloud-superbrain"}}},
			req:   keys.CreateKeyRequest{AllowedServices: []string{"core-research"}}, code: apierr.DelegationDenied},
		{name: "an empty allowlist reaches no service",
			chain: []keys.CreateKeyRequest{{}},
			req:   keys.CreateKeyRequest{AllowedServices: []string{}},
			verify: func(t *testing.T, k *keys.Key) {
				if k.AllowedServices == nil || k.AllowsService("cloud-superbrain") {
					t.Fatalf("allowedServices = %v", k.AllowedServices)
				}
			}},
		{name: "an exclusion is stored as the parent's boundary minus the excluded",
			chain: []keys.CreateKeyRequest{{}, {AllowedServices: []string{"cloud-superbrain", "core-research"}}},
			req:   keys.CreateKeyRequest{ExcludedServices: []string{"core-research", "core-research", "managed-agents"}},
			verify: func(t *testing.T, k *keys.Key) {
				if !slices.Equal(k.AllowedServices, []string{"cloud-superbrain"}) {
					t.Fatalf("allowedServices = %v", k.AllowedServices)
				}
			}},
		{name: "allowed and excluded services together are a validation failure",
			req: keys.CreateKeyRequest{AllowedServices: []string{}, ExcludedServices: []string{}}, code: apierr.ValidationFailed},
		{name: "an exact operation outside the parent's boundary is denied",
			chain: []keys.CreateKeyRequest{{}, {AllowedOperations: []string{"services.invoke.cloud-superbrain.memory.list"}}},
			req:   keys.CreateKeyRequest{AllowedOperations: []string{"services.invoke.cloud-superbrain.memory.delete"}}, code: apierr.DelegationDenied},
		{name: "an aggregate keeps only what the parent allows of it",
			chain: []keys.CreateKeyRequest{{}, {AllowedOperations: []string{"services.invoke.cloud-superbrain.memory.list", "projects.list"}}},
			req:   keys.CreateKeyRequest{AllowedOperations: []string{"services.invoke.cloud-superbrain", "services.invoke.cloud-superbrain"}},
			verify: func(t *testing.T, k *keys.Key) {
				if !slices.Equal(k.AllowedOperations, []string{"services.invoke.cloud-superbrain.memory.list"}) {
					t.Fatalf("allowedOperations = %v", k.AllowedOperations)
				}
			}},
		{name: "excluded operations are resolved and removed",
			chain: []keys.CreateKeyRequest{{}},
			req:   keys.CreateKeyRequest{ExcludedOperations: []string{"services.invoke.cloud-superbrain", "apiKeys.revoke"}},
			verify: func(t *testing.T, k *keys.Key) {
				for _, op := range []string{"services.invoke.cloud-superbrain.memory.write", "services.invoke.cloud-superbrain.memory.delete", "apiKeys.revoke"} {
					if k.AllowsOperation(op) {
						t.Errorf("%s still allowed", op)
					}
				}
				if !k.AllowsOperation("projects.list") {
					t.Error("projects.list lost")
				}
			}},
		{name: "an unknown operation selector is a validation failure",
			req: keys.CreateKeyRequest{AllowedOperations: []string{"services.invoke.cloud-superbrain.memory.steal"}}, code: apierr.ValidationFailed},
		{name: "an expiry after an ancestor's is denied",
			chain: []keys.CreateKeyRequest{{}, {ExpiresAt: &sooner}},
			req:   keys.CreateKeyRequest{ExpiresAt: &later}, code: apierr.DelegationDenied},
		{name: "an expiry in the past is a validation failure",
			req: keys.CreateKeyRequest{ExpiresAt: ptr(now.Add(-time.Second))}, code: apierr.ValidationFailed},
		{name: "a project-bound key cannot create a key for another project",
			chain: []keys.CreateKeyRequest{{}, {ProjectID: ptr("proj_a")}},
			req:   keys.CreateKeyRequest{ProjectID: ptr("proj_b")}, code: apierr.DelegationDenied},
		{name: "a project-bound key binds its children",
			chain: []keys.CreateKeyRequest{{}, {ProjectID: ptr("proj_a")}},
			verify: func(t *testing.T, k *keys.Key) {
				if k.ProjectID == nil || *k.ProjectID != "proj_a" {
					t.Fatalf("projectId = %v", k.ProjectID)
				}
			}},
		{name: "an unknown project is a validation failure",
			chain: []keys.CreateKeyRequest{{}},
			req:   keys.CreateKeyRequest{ProjectID: ptr("proj_zzz")}, code: apierr.ValidationFailed},
		{name: "a looser privacy tier is denied",
			chain: []keys.CreateKeyRequest{{}, {PrivacyTier: keys.TierPseudonymous}},
			req:   keys.CreateKeyRequest{PrivacyTier: keys.TierStandard}, code: apierr.DelegationDenied},
		{name: "a limit above a covering ancestor limit is denied",
			chain: []keys.CreateKeyRequest{{Limits: limits.Set{"services.invoke": {RequestsPerMinute: ptr(int64(10))}}}},
			req:   keys.CreateKeyRequest{Limits: limits.Set{"services.invoke.cloud-superbrain.memory.write": {RequestsPerMinute: ptr(int64(11))}}}, code: apierr.DelegationDenied},
		{name: "a limit within every covering ancestor limit is kept",
			chain: []keys.CreateKeyRequest{{Limits: limits.Set{"services.invoke": {CreditsPerDay: ptr(5.0)}, "*": {MaxConcurrent: ptr(int64(4))}}}},
			req:   keys.CreateKeyRequest{Limits: limits.Set{"services.invoke.cloud-superbrain": {CreditsPerDay: ptr(1.0), MaxConcurrent: ptr(int64(4))}}},
			verify: func(t *testing.T, k *keys.Key) {
				if l, ok := k.Limits["services.invoke.cloud-superbrain"]; !ok || *l.CreditsPerDay != 1 {
					t.Fatalf("limits = %v", k.Limits)
				}
			}},
		{name: "creditsPerDay on an unmetered operation is a validation failure",
			req: keys.CreateKeyRequest{Limits: limits.Set{"projects.list": {CreditsPerDay: ptr(1.0)}}}, code: apierr.ValidationFailed},
		{name: "an empty limit is a validation failure",
			req: keys.CreateKeyRequest{Limits: limits.Set{"projects.list": {}}}, code: apierr.ValidationFailed},
		{name: "delegation stops at the maximum depth",
			chain: make([]keys.CreateKeyRequest, keys.MaxDepth), code: apierr.DelegationDenied},
		{name: "the maximum depth itself is reachable",
			chain: make([]keys.CreateKeyRequest, keys.MaxDepth-1),
			verify: func(t *testing.T, k *keys.Key) {
				if k.Depth != keys.MaxDepth || len(k.Ancestors) != keys.MaxDepth-1 {
					t.Fatalf("depth %d, %d ancestors", k.Depth, len(k.Ancestors))
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chain := build(t, tc.chain...)
			k, err := keys.Build(chain, "acct_test", tc.req, now, projects("proj_a", "proj_b"))
			if got := codeOf(t, err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
			if err == nil && tc.verify != nil {
				tc.verify(t, k)
			}
		})
	}
}

// Every list of a key request is bounded, refused with a
// field error naming it before any entry is resolved, so a huge list costs
// no more than a small one.
func TestEveryListOfAKeyRequestIsBoundedTo256Entries(t *testing.T) {
	many := func(s string, n int) []string { return slices.Repeat([]string{s}, n) }
	manyLimits := limits.Set{}
	for i := 0; i <= keys.MaxListEntries; i++ {
		manyLimits[strings.Repeat("x", i+1)] = limits.Limit{}
	}
	const copies = 58_000
	for _, tc := range []struct {
		field string
		req   keys.CreateKeyRequest
	}{
		{"body.scopes", keys.CreateKeyRequest{Scopes: many("projects:read", copies)}},
		{"body.allowedServices", keys.CreateKeyRequest{AllowedServices: many("cloud-superbrain", copies)}},
		{"body.excludedServices", keys.CreateKeyRequest{ExcludedServices: many("cloud-superbrain", keys.MaxListEntries+1)}},
		{"body.allowedOperations", keys.CreateKeyRequest{AllowedOperations: many("services.invoke", copies)}},
		{"body.excludedOperations", keys.CreateKeyRequest{ExcludedOperations: many("runs.create", copies)}},
		{"body.limits", keys.CreateKeyRequest{Limits: manyLimits}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			start := time.Now()
			_, err := keys.Build(nil, "acct_test", tc.req, now, projects())
			if took := time.Since(start); took > 200*time.Millisecond {
				t.Errorf("refusing took %v", took)
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.ValidationFailed || len(e.Errors) != 1 || e.Errors[0].Location != tc.field {
				t.Fatalf("err = %v (%+v), want one validation error at %s", err, e, tc.field)
			}
			if !strings.Contains(e.Errors[0].Message, "at most 256") {
				t.Fatalf("message %q does not state the bound", e.Errors[0].Message)
			}
		})
	}
}

// At the bound, duplicates are accepted, resolved once and stored once.
func TestDuplicateSelectorsAtTheBoundAreResolvedOnce(t *testing.T) {
	parent := build(t, keys.CreateKeyRequest{})
	req := keys.CreateKeyRequest{
		Scopes:            slices.Repeat([]string{"runs:read", "projects:read"}, keys.MaxListEntries/2),
		AllowedServices:   slices.Repeat([]string{"cloud-superbrain"}, keys.MaxListEntries),
		AllowedOperations: slices.Repeat([]string{"services.invoke.cloud-superbrain", "services.invoke"}, keys.MaxListEntries/2),
	}
	start := time.Now()
	k, err := keys.Build(parent, "acct_test", req, now, projects())
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 200*time.Millisecond {
		t.Errorf("building took %v", took)
	}
	if !slices.Equal(k.Scopes, []string{"projects:read", "runs:read"}) || !slices.Equal(k.AllowedServices, []string{"cloud-superbrain"}) {
		t.Fatalf("scopes %v, services %v", k.Scopes, k.AllowedServices)
	}
	if !slices.IsSorted(k.AllowedOperations) || len(slices.Compact(slices.Clone(k.AllowedOperations))) != len(k.AllowedOperations) {
		t.Fatalf("operations not deduplicated: %v", k.AllowedOperations)
	}
}

// Field errors point at the entry: a repeated bad entry is reported once,
// at its first index, and lists are reported in a fixed order.
func TestValidationErrorsNameTheOffendingEntry(t *testing.T) {
	_, err := keys.Build(nil, "acct_test", keys.CreateKeyRequest{Scopes: []string{"projects:read", "nope", "nope"}, AllowedServices: []string{"cloud-superbrain", "ghost"}}, now, projects())
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != apierr.ValidationFailed {
		t.Fatalf("err = %v", err)
	}
	var locs []string
	for _, f := range e.Errors {
		locs = append(locs, f.Location)
	}
	if !slices.Equal(locs, []string{"body.scopes[1]", "body.allowedServices[1]"}) {
		t.Fatalf("locations = %v", locs)
	}
}
