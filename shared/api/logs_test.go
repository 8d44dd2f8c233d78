package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"platformapi/shared/harness/apitest"
)

func TestLogsNeverHoldSecretsOrCredentials(t *testing.T) {
	e := apitest.New(t)
	tok := e.Token(3)
	r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Idem: apitest.Idem(), Body: map[string]any{}, Headers: map[string]string{"X-Service-Credit-Token": tok}}), 201)
	secret := r.Str("secret")
	child, _ := e.Child(secret, map[string]any{})
	e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: secret})
	e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: secret + "x"})
	logs := e.Logs.String()
	for _, s := range []string{secret, child, tok, "Bearer", secret[len("psk_key_")+26:]} {
		if strings.Contains(logs, s) {
			t.Fatalf("the logs contain %q", s)
		}
	}
	var line map[string]any
	first, _, _ := strings.Cut(logs, "\n")
	if err := json.Unmarshal([]byte(first), &line); err != nil || line["requestId"] == nil || line["status"] == nil || line["latencyMicros"] == nil {
		t.Fatalf("access log line is not structured JSON with request id, status and latency: %s", first)
	}
}

// The privacy tier decides what request logs keep of the end user.
func TestPrivacyTierDecidesWhatLogsKeepOfTheEndUser(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	for _, tc := range []struct {
		tier      string
		keepsRaw  bool
		keepsAnon bool
	}{
		{"standard", true, false},
		{"pseudonymous", false, true},
		{"minimal", false, false},
	} {
		t.Run(tc.tier, func(t *testing.T) {
			k, rec := e.Child(root, map[string]any{"privacyTier": tc.tier})
			user := "enduser-" + tc.tier
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k, Headers: map[string]string{"X-Service-End-User": user}}), 200)
			var line string
			for _, l := range strings.Split(e.Logs.String(), "\n") {
				if strings.Contains(l, rec.Str("id")) {
					line = l
				}
			}
			if line == "" {
				t.Fatal("no log line for the request")
			}
			if got := strings.Contains(line, user); got != tc.keepsRaw {
				t.Errorf("raw end user in log = %v, want %v: %s", got, tc.keepsRaw, line)
			}
			if got := strings.Contains(line, `"endUser":"anon_`); got != tc.keepsAnon {
				t.Errorf("pseudonym in log = %v, want %v: %s", got, tc.keepsAnon, line)
			}
		})
	}
}

// A secret sent by mistake in a URL path never reaches the log verbatim.
func TestASecretInAPathIsRedactedFromTheLog(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	e.Do(apitest.Req{Method: "GET", Path: "/v1/api-keys/" + root, Key: root})
	e.Do(apitest.Req{Method: "GET", Path: "/v1/" + root})
	if strings.Contains(e.Logs.String(), root) || strings.Contains(e.Logs.String(), root[len(root)-20:]) {
		t.Fatalf("the secret reached the log: %s", e.Logs.String())
	}
}

// endUsersLogged returns the endUser of every access-log line of key id.
func endUsersLogged(t *testing.T, e *apitest.Env, keyID string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(e.Logs.String(), "\n") {
		var line map[string]any
		if !strings.Contains(l, keyID) || json.Unmarshal([]byte(l), &line) != nil || line["status"] == nil {
			continue
		}
		eu, _ := line["endUser"].(string)
		out = append(out, eu)
	}
	return out
}

// The pseudonymous tier's pseudonym is keyed per account (docs/keys.md):
// stable for one end user in one account, different
// in another account, never the unkeyed hash of account id and end user,
// the same in the access log and the audit event; and without an envelope
// key nothing of the end user is kept at all.
func TestThePseudonymIsKeyedPerAccountInLogsAndAuditEvents(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		user := map[string]string{"X-Service-End-User": "user-42"}
		var anons []string
		for range 2 {
			root, _ := e.RootKey(1, nil)
			k, rec := e.Child(root, map[string]any{"privacyTier": "pseudonymous"})
			for range 2 {
				e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k, Headers: user}), 200)
			}
			logged := endUsersLogged(t, e, rec.Str("id"))
			if len(logged) != 2 || logged[0] != logged[1] || !strings.HasPrefix(logged[0], "anon_") {
				t.Fatalf("pseudonyms logged %v, want one stable pseudonym", logged)
			}
			h := sha256.Sum256([]byte(rec.Str("accountId") + "\x00user-42"))
			if logged[0] == "anon_"+hex.EncodeToString(h[:10]) {
				t.Fatal("the pseudonym is the unkeyed hash of account id and end user")
			}
			// The hour of the requests: a default range reads every day
			// of the retention, shard by shard.
			since := e.Clock.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
			events := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/audit-events?keyId=" + rec.Str("id") + "&since=" + since, Key: root}), 200).Body["data"].([]any)
			for _, ev := range events {
				if eu := ev.(map[string]any)["endUser"]; eu != logged[0] {
					t.Fatalf("audit event endUser %v, log %s", eu, logged[0])
				}
			}
			anons = append(anons, logged[0])
		}
		if anons[0] == anons[1] {
			t.Fatalf("two accounts give end user user-42 the same pseudonym %s", anons[0])
		}
	})
}

// An audit event shipped on its request's access line is never lost to the
// log level: the line is written even when the logger keeps only warnings,
// while a line that carries no event is not.
func TestAnAuditedRequestsLineIsWrittenWhateverTheLogLevel(t *testing.T) {
	e := apitest.New(t, apitest.Options{ShipAudit: true, LogLevel: slog.LevelWarn})
	root, _ := e.RootKey(1, nil)
	r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root}), 200)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/health"}), 200)
	var audited, plain int
	for _, l := range strings.Split(strings.TrimSpace(e.Logs.String()), "\n") {
		switch {
		case strings.Contains(l, `"au":1`) && strings.Contains(l, r.Header.Get("X-Request-Id")):
			audited++
		case strings.Contains(l, `"path":"/health"`):
			plain++
		}
	}
	if audited != 1 || plain != 0 {
		t.Fatalf("%d audited and %d unaudited access lines at level WARN; want 1 and 0:\n%s", audited, plain, e.Logs.String())
	}
}
