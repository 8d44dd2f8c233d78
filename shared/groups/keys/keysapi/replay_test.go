package keysapi_test

import (
	"bytes"
	"testing"
	"time"

	"platformapi/shared/harness/apitest"
)

// A response that answers a secret is stored for replay sealed, never in
// clear: the raw idempotency record holds the secret in no encoding, and a
// replay still returns it to the client whose answer was lost.
func TestSecretBearingResponsesAreStoredSealedAndStillReplayed(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, rootRec := e.RootKey(1, nil)
		rootID := rootRec.Str("id")
		_, rolled := e.Child(root, map[string]any{"label": "to roll"})
		cases := []struct {
			name string
			req  apitest.Req
			want int
		}{
			{"child key", apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: root, Body: map[string]any{"label": "child"}}, 201},
			{"rolled key", apitest.Req{Method: "POST", Path: "/v1/api-keys/" + rolled.Str("id") + "/roll", Key: root,
				Body: map[string]any{"expiresAt": e.Clock.Now().Add(time.Hour).Format(time.RFC3339)}}, 201},
			{"webhook", apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: root, Body: map[string]any{"url": "https://93.184.216.34/in", "events": []string{"*"}}}, 201},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tc.req.Idem = apitest.Idem()
				first := e.Must(e.Do(tc.req), tc.want)
				secret := first.Str("secret")
				if len(secret) < 20 {
					t.Fatalf("no secret in %s", first.Raw)
				}
				raw := e.RawPartition("idem#" + rootID + "#" + tc.req.Idem)
				if len(raw) == 0 {
					t.Fatal("no idempotency record was stored")
				}
				if apitest.Holds(raw, secret) {
					t.Fatalf("the stored response holds the secret: %s", raw)
				}
				if !bytes.Contains(raw, []byte("sealed")) {
					t.Fatalf("the stored response is not sealed: %s", raw)
				}
				again := e.Must(e.Do(tc.req), tc.want)
				if again.Header.Get("Idempotent-Replayed") != "true" || again.Str("secret") != secret {
					t.Fatalf("replay = %s, want the same secret", again.Raw)
				}
			})
		}
	})
}

// Without an envelope key, an operation that answers a secret refuses to
// run rather than keep the secret in clear.
func TestASecretBearingOperationNeedsTheEnvelopeKey(t *testing.T) {
	e := apitest.New(t, apitest.Options{NoSealer: true})
	first := apitest.Req{Method: "POST", Path: "/v1/api-keys", Idem: apitest.Idem(), Body: map[string]any{"label": "root"},
		Headers: map[string]string{"X-Service-Credit-Token": e.Token(1)}}
	e.Must(e.Do(first), 503, "service_unavailable")
	// Nothing ran: the token is still unredeemed once a key can be sealed.
	if r := e.Do(first); r.Status != 503 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry = %d %s", r.Status, r.Raw)
	}
}
