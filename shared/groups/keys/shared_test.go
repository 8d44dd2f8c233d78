package keys_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"platformapi/shared/app"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/jsonlog"
	"platformapi/shared/groups/keys"
)

// fingerprint is everything a key holds, through its pointers, slices and
// maps: any write to a shared key shows in it.
func fingerprint(t *testing.T, k *keys.Key) string {
	t.Helper()
	public, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	internal, err := json.Marshal([]any{k.AccountID, k.Ancestors, k.SecretHash})
	if err != nil {
		t.Fatal(err)
	}
	return string(public) + string(internal)
}

// Authentication on the embedded store hands every request the same
// decoded keys (docs/keys.md, "Authentication"): no handler, policy check or response may
// write to them. Requests of every group, made with keys whose records are
// shared, leave each shared key exactly as it was.
func TestRequestsNeverChangeASharedDecodedKey(t *testing.T) {
	ctx := context.Background()
	rt, err := app.Open(ctx, app.Config{Backend: "embedded", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	h, err := rt.NewServer(slog.New(jsonlog.New(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	do := func(method, path, secret string, body any) (int, map[string]any) {
		n++
		var raw []byte
		if body != nil {
			raw, _ = json.Marshal(body)
		}
		req := httptest.NewRequest(method, path, bytes.NewReader(raw))
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if method != http.MethodGet {
			req.Header.Set("Idempotency-Key", fmt.Sprintf("shared-keys-%04d", n))
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	tok, err := rt.Signer.Mint(1000*catalog.MicroPerCredit, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/api-keys", bytes.NewReader([]byte(`{"label":"root"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "shared-keys-root")
	req.Header.Set("X-Service-Credit-Token", tok)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var root struct{ Secret string }
	if err := json.Unmarshal(rec.Body.Bytes(), &root); rec.Code != http.StatusCreated || err != nil {
		t.Fatalf("root key: %d %s", rec.Code, rec.Body)
	}
	secrets := []string{root.Secret}
	for _, body := range []map[string]any{
		{"label": "mid", "allowedIps": []string{"0.0.0.0/0", "::/0"}, "metadata": map[string]string{"team": "a"}},
		{"label": "leaf", "limits": map[string]any{"*": map[string]any{"requestsPerMinute": 1000}}},
	} {
		status, out := do(http.MethodPost, "/v1/api-keys", secrets[len(secrets)-1], body)
		if status != http.StatusCreated {
			t.Fatalf("child key: %d %v", status, out)
		}
		secrets = append(secrets, out["secret"].(string))
	}
	for range 2 * keys.Replicas {
		for _, s := range secrets {
			if status, out := do(http.MethodGet, "/v1/credits/balance", s, nil); status != http.StatusOK {
				t.Fatalf("balance: %d %v", status, out)
			}
		}
	}
	shared := keys.SharedKeys()
	if len(shared) < 3*keys.Replicas {
		t.Fatalf("%d shared keys after reading every copy of 3 keys: the decoded cache is not on", len(shared))
	}
	before := make([]string, len(shared))
	for i, k := range shared {
		before[i] = fingerprint(t, k)
	}
	for _, s := range secrets {
		for _, path := range []string{"/", "/actions", "/api-keys", "/approvals", "/artifacts", "/audit-events",
			"/capabilities", "/connections", "/credits/balance", "/credits/ledger", "/files", "/pricing",
			"/projects", "/runs", "/services", "/usage", "/wallets", "/webhook-deliveries", "/webhooks"} {
			do(http.MethodGet, "/v1"+path, s, nil)
		}
		status, child := do(http.MethodPost, "/v1/api-keys", s, map[string]any{"label": "short-lived"})
		if status != http.StatusCreated {
			t.Fatalf("child: %d %v", status, child)
		}
		id := child["id"].(string)
		do(http.MethodPost, "/v1/api-keys/"+id+"/roll", s, map[string]any{"expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		do(http.MethodDelete, "/v1/api-keys/"+id, s, nil)
		do(http.MethodPost, "/v1/projects", s, map[string]any{"name": "p " + id})
	}
	for i, k := range shared {
		if got := fingerprint(t, k); got != before[i] {
			t.Fatalf("a shared key changed during requests:\nbefore %s\nafter  %s", before[i], got)
		}
	}
}
