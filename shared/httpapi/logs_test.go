package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLogsNeverHoldSecretsOrCredentials(t *testing.T) {
	e := newEnv(t)
	tok := e.token(3)
	r := e.must(e.do(req{method: "POST", path: "/v1/api-keys", idem: idem(), body: map[string]any{}, headers: map[string]string{"X-Service-Credit-Token": tok}}), 201)
	secret := r.str("secret")
	child, _ := e.child(secret, map[string]any{})
	e.do(req{method: "GET", path: "/v1/credits/balance", key: secret})
	e.do(req{method: "GET", path: "/v1/credits/balance", key: secret + "x"})
	logs := e.logs.String()
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
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
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
			k, rec := e.child(root, map[string]any{"privacyTier": tc.tier})
			user := "enduser-" + tc.tier
			e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: k, headers: map[string]string{"X-Service-End-User": user}}), 200)
			var line string
			for _, l := range strings.Split(e.logs.String(), "\n") {
				if strings.Contains(l, rec.str("id")) {
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
