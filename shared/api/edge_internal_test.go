package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"platformapi/shared/groups/keys"
)

func TestPanicsBecomeA500WithoutLeakingInternals(t *testing.T) {
	var logs bytes.Buffer
	k := &Kernel{log: slog.New(slog.NewJSONHandler(&logs, nil))}
	h := k.edge(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("database password is hunter2")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/anything", nil))
	if rec.Code != 500 || rec.Header().Get("Content-Type") != "application/problem+json" || rec.Header().Get("X-Request-Id") == "" {
		t.Fatalf("got %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if strings.Contains(rec.Body.String(), "hunter2") {
		t.Fatal("the panic message reached the client")
	}
	var body map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if body["code"] != "internal_error" || body["requestId"] != rec.Header().Get("X-Request-Id") {
		t.Fatalf("body = %s", rec.Body)
	}
	if !strings.Contains(logs.String(), "hunter2") {
		t.Fatal("the panic was not logged for operators")
	}
}

// Without an envelope key there is no pseudonym key: the pseudonymous tier
// then keeps nothing of the end user, never an unkeyed hash.
func TestWithoutAnEnvelopeKeyThePseudonymousTierKeepsNoEndUser(t *testing.T) {
	k := New(Config{})
	for _, tc := range []struct{ tier, want string }{
		{keys.TierStandard, "user-42"},
		{keys.TierPseudonymous, ""},
		{keys.TierMinimal, ""},
	} {
		p := &Principal{Chain: []*keys.Key{{ID: "key_1", AccountID: "acct_1", PrivacyTier: tc.tier}}, EndUser: "user-42"}
		if got := k.endUserForLog(context.Background(), p); got != tc.want {
			t.Errorf("%s: logged %q, want %q", tc.tier, got, tc.want)
		}
	}
}
