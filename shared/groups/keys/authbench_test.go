package keys

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/groups/credits/credittoken"
)

// BenchmarkAuthenticate: a depth-3 key with its account, as the audited
// balance read authenticates, on the embedded store with every copy cached.
func BenchmarkAuthenticate(b *testing.B) {
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "platform.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ctx := context.Background()
	r := NewAuthRepo(st, st, time.Now)
	root, err := r.CreateAccount(ctx, credittoken.Claims{ID: "ctk_bench", CreditsMicro: 1, ExpiresAt: time.Now().Add(time.Hour).Unix()}, CreateKeyRequest{})
	if err != nil {
		b.Fatal(err)
	}
	chain := []*Key{root.Key}
	secret := ""
	for range 2 {
		c, err := r.CreateChild(ctx, chain, CreateKeyRequest{}, func(string) bool { return false })
		if err != nil {
			b.Fatal(err)
		}
		chain, secret = append(chain, c.Key), c.Secret
	}
	for range 2 * Replicas {
		if _, _, err := r.Authenticate(ctx, secret); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := r.Authenticate(ctx, secret); err != nil {
			b.Fatal(err)
		}
	}
}
