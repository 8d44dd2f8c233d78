package localkey_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/envelope/envelopetest"
	"platformapi/shared/adapters/envelope/localkey"
)

func open(t *testing.T, path string) *localkey.Sealer {
	t.Helper()
	s, err := localkey.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	envelopetest.RunConformance(t, func(t *testing.T) envelope.Sealer {
		return open(t, filepath.Join(t.TempDir(), "master.key"))
	})
}

func TestMasterKeyIsCreatedPrivateAndReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "master.key")
	ctx := context.Background()
	sealed, err := open(t, path).Seal(ctx, []byte("secret"), []byte("ad"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() != 32 {
		t.Fatalf("master key file: %v, %v", st, err)
	}
	got, err := open(t, path).Open(ctx, sealed, []byte("ad"))
	if err != nil || !bytes.Equal(got, []byte("secret")) {
		t.Fatalf("after reopening: %q, %v", got, err)
	}
}

func TestAnotherMasterKeyCannotOpen(t *testing.T) {
	ctx := context.Background()
	sealed, err := open(t, filepath.Join(t.TempDir(), "a.key")).Seal(ctx, []byte("secret"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open(t, filepath.Join(t.TempDir(), "b.key")).Open(ctx, sealed, nil); !errors.Is(err, envelope.ErrDecrypt) {
		t.Fatalf("err = %v; want ErrDecrypt", err)
	}
}

func TestShortMasterKeyFileIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "master.key")
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := localkey.Open(path); err == nil {
		t.Fatal("Open accepted a 5-byte master key")
	}
}

func TestConcurrentFirstUsesAgreeOnOneKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "master.key")
	ctx := context.Background()
	sealers := make(chan *localkey.Sealer, 8)
	for range 8 {
		go func() {
			s, err := localkey.Open(path)
			if err != nil {
				t.Error(err)
			}
			sealers <- s
		}()
	}
	var all []*localkey.Sealer
	for range 8 {
		all = append(all, <-sealers)
	}
	if t.Failed() {
		return
	}
	sealed, err := all[0].Seal(ctx, []byte("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range all {
		if _, err := s.Open(ctx, sealed, nil); err != nil {
			t.Fatalf("sealer %d cannot open: %v", i, err)
		}
	}
}
