package keys_test

import (
	"slices"
	"strings"
	"testing"

	"platformapi/shared/groups/keys"
)

// fuzzKey is a depth-3 key whose secret seeds FuzzParseSecret.
var fuzzKey = &keys.Key{ID: "key_01JZ3NDEKTSV4RRFFQ69G5FAVA", AccountID: "acct_01JZ3NDEKTSV4RRFFQ69G5FAVB",
	Ancestors: []string{"key_01JZ3NDEKTSV4RRFFQ69G5FAVC", "key_01JZ3NDEKTSV4RRFFQ69G5FAVD"}}

// FuzzParseSecret: parsing never panics, and what it accepts is read
// faithfully: the secret is exactly psk_<key id>_<43 random characters>_
// <account id>[_<ancestor id>…] with the ids it reports, so no two readings
// of one secret exist.
func FuzzParseSecret(f *testing.F) {
	s, _ := keys.NewSecret(fuzzKey)
	f.Add(s)
	f.Add(s[:len(s)-31])
	f.Add("psk_")
	f.Add(strings.Replace(s, "_acct_", "-acct_", 1))
	f.Fuzz(func(t *testing.T, secret string) {
		h, ok := keys.ParseSecret(secret)
		if !ok {
			return
		}
		if len(h.Ancestors) >= keys.MaxDepth || len(secret) > 512 {
			t.Fatalf("accepted %q: %+v", secret, h)
		}
		random := secret[len("psk_")+len(h.KeyID)+1:][:43]
		again := strings.Join(append([]string{"psk_" + h.KeyID, random, h.AccountID}, h.Ancestors...), "_")
		if again != secret {
			t.Fatalf("%q parsed as %+v, which reassembles to %q", secret, h, again)
		}
	})
}

// FuzzExpand: resolving a selector never panics; what it accepts resolves
// to exact operations that each resolve to themselves, and a first key
// allowed that selector holds exactly those operations.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"services.invoke", "services.invoke.cloud-superbrain", "services.invoke.cloud-superbrain.memory.write",
		"runs.create.cloud-superbrain", "projects.list", "services.invoke..", "runs.create.cloud-superbrain.memory.write.x", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sel string) {
		_ = keys.ValidLimitSelector(sel)
		_ = keys.MeteredSelector(sel)
		ops, ok := keys.Expand(sel)
		if !ok {
			if _, err := keys.Build(nil, "acct_x", keys.CreateKeyRequest{AllowedOperations: []string{sel}}, now, projects()); err == nil {
				t.Fatalf("unknown selector %q accepted in a key", sel)
			}
			return
		}
		if len(ops) == 0 && !strings.HasPrefix(sel, "services.invoke.") && !strings.HasPrefix(sel, "runs.create.") {
			t.Fatalf("%q resolves to nothing", sel)
		}
		for _, op := range ops {
			exact, ok := keys.Expand(op)
			if !ok || !slices.Contains(exact, op) {
				t.Fatalf("%q resolves to %q, which does not resolve to itself (%v)", sel, op, exact)
			}
		}
		k, err := keys.Build(nil, "acct_x", keys.CreateKeyRequest{AllowedOperations: []string{sel, sel}}, now, projects())
		if err != nil {
			t.Fatalf("Build with %q: %v", sel, err)
		}
		want := slices.Compact(slices.Sorted(slices.Values(ops)))
		if !slices.Equal(k.AllowedOperations, want) {
			t.Fatalf("%q: key holds %v, want %v", sel, k.AllowedOperations, want)
		}
	})
}
