package keys_test

import (
	"testing"
	"time"

	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/keys"
)

// The micro-benchmarks of the policy a request pays for after its key is
// read (docs/benchmarks.md): the access checks authorize runs on every request, and
// the selector resolution a key creation runs once.

var benchNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func noProject(string) bool { return false }

func rpm(n int64) limits.Limit { return limits.Limit{RequestsPerMinute: &n} }

// benchChain is a root and a child whose service and operation boundaries
// are explicit lists, so that every check below has a list to scan; an
// unbounded key answers without looking.
func benchChain(b *testing.B) []*keys.Key {
	b.Helper()
	root, err := keys.Build(nil, "acct_bench", keys.CreateKeyRequest{Limits: limits.Set{"*": rpm(10_000)}}, benchNow, noProject)
	if err != nil {
		b.Fatal(err)
	}
	child, err := keys.Build([]*keys.Key{root}, "acct_bench", keys.CreateKeyRequest{
		ExcludedServices:   []string{"managed-trading"},
		ExcludedOperations: []string{"apiKeys.revoke", "runs.create"},
		Limits:             limits.Set{"services.invoke": rpm(1_000)},
	}, benchNow, noProject)
	if err != nil {
		b.Fatal(err)
	}
	return []*keys.Key{root, child}
}

// BenchmarkPolicyChecks: scope, service access and operation access of an
// invoke request, as authorize runs them, and each check alone.
func BenchmarkPolicyChecks(b *testing.B) {
	k := benchChain(b)[1]
	const svc, op = "cloud-superbrain", "memory.write"
	b.Run("HasScope", func(b *testing.B) {
		for b.Loop() {
			if !k.HasScope("services:invoke") {
				b.Fatal("scope denied")
			}
		}
	})
	b.Run("AllowsService", func(b *testing.B) {
		for b.Loop() {
			if !k.AllowsService(svc) {
				b.Fatal("service denied")
			}
		}
	})
	b.Run("RequestOperation", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = keys.RequestOperation("services.invoke", svc, op)
		}
	})
	exact := keys.RequestOperation("services.invoke", svc, op)
	b.Run("AllowsOperation", func(b *testing.B) {
		for b.Loop() {
			if !k.AllowsOperation(exact) {
				b.Fatal("operation denied")
			}
		}
	})
	b.Run("AllowsOperationDenied", func(b *testing.B) {
		// A denial scans the whole allowlist: the worst case.
		for b.Loop() {
			if k.AllowsOperation("apiKeys.revoke") {
				b.Fatal("operation allowed")
			}
		}
	})
	b.Run("All", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !k.HasScope("services:invoke") || !k.AllowsService(svc) || !k.AllowsOperation(keys.RequestOperation("services.invoke", svc, op)) {
				b.Fatal("denied")
			}
		}
	})
}

// BenchmarkExpand resolves one operation selector into exact ids: a route
// operation, a service's capabilities, and the aggregate over every
// registered service.
func BenchmarkExpand(b *testing.B) {
	for _, sel := range []string{"projects.create", "services.invoke.cloud-superbrain", "services.invoke"} {
		b.Run(sel, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := keys.Expand(sel); !ok {
					b.Fatalf("%s does not expand", sel)
				}
			}
		})
	}
}

// BenchmarkBuildChild builds a depth-3 key with operation boundaries and
// limits, which resolves every selector and checks every limit against the
// chain's.
func BenchmarkBuildChild(b *testing.B) {
	chain := benchChain(b)
	limited := limits.Set{"services.invoke.cloud-superbrain": rpm(100), "projects.create": rpm(10)}
	for _, c := range []struct {
		name string
		req  keys.CreateKeyRequest
	}{
		{"AllowedOperations", keys.CreateKeyRequest{
			AllowedOperations: []string{"services.invoke.cloud-superbrain", "projects.create", "projects.list", "credits.balance.read"},
			Limits:            limited,
		}},
		{"ExcludedOperations", keys.CreateKeyRequest{
			ExcludedOperations: []string{"services.invoke.cloud-superbrain.memory.delete", "projects.create"},
			Limits:             limits.Set{"services.invoke.cloud-superbrain": rpm(100)},
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := keys.Build(chain, "acct_bench", c.req, benchNow, noProject); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
