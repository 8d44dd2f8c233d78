package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"platformapi/shared/base/apierr"
)

const testSecret = "s3cr3t-0123456789-abcdef"

func withConnections(creds map[string]Credential) Request {
	r := testRequest()
	r.Connections = creds
	return r
}

// recordHeaders answers success and keeps the request's headers and body.
func recordHeaders(got *http.Header, body *[]byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		*got = r.Header.Clone()
		*body, _ = io.ReadAll(r.Body)
		answer200("0.01")(w, r)
	}
}

func TestEachCredentialTypeIsSentAsItsHeader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cred   Credential
		header string
		want   string
	}{
		{"api_key in its own header", Credential{Type: CredentialAPIKey, HeaderName: "x-vendor-key", Secret: testSecret}, "X-Vendor-Key", testSecret},
		{"bearer as an Authorization bearer", Credential{Type: CredentialBearer, Secret: testSecret}, "Authorization", "Bearer " + testSecret},
		{"oauth2 access token as an Authorization bearer", Credential{Type: CredentialOAuth2, Secret: testSecret}, "Authorization", "Bearer " + testSecret},
		{"basic as Authorization basic", Credential{Type: CredentialBasic, Username: "ada", Secret: "pa:ss"}, "Authorization", "Basic YWRhOnBhOnNz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got http.Header
			var body []byte
			h := newTestHTTP(t, recordHeaders(&got, &body), HTTPConfig{CredentialHeader: "X-Platform-Key", Credential: "operator"})
			tc.cred.ConnectionID = "con_1"
			if _, err := h.Invoke(context.Background(), withConnections(map[string]Credential{"vendor": tc.cred})); err != nil {
				t.Fatal(err)
			}
			if v := got.Values(tc.header); len(v) != 1 || v[0] != tc.want {
				t.Errorf("%s = %q, want [%q]", tc.header, v, tc.want)
			}
			if got.Get("X-Platform-Key") != "operator" {
				t.Errorf("the operator's credential was lost: %q", got.Get("X-Platform-Key"))
			}
			if bytes.Contains(body, []byte(tc.cred.Secret)) {
				t.Errorf("the secret is in the body %s", body)
			}
		})
	}
}

func TestConnectionsNeverShareAHeader(t *testing.T) {
	for _, tc := range []struct {
		name  string
		creds map[string]Credential
		cfg   HTTPConfig
		slot  string
	}{
		{"two bearers", map[string]Credential{
			"a": {Type: CredentialBearer, Secret: testSecret}, "b": {Type: CredentialOAuth2, Secret: testSecret},
		}, HTTPConfig{}, "body.connections.b"},
		{"two api keys in one header, spelled differently", map[string]Credential{
			"a": {Type: CredentialAPIKey, HeaderName: "x-key", Secret: testSecret}, "b": {Type: CredentialAPIKey, HeaderName: "X-KEY", Secret: testSecret},
		}, HTTPConfig{}, "body.connections.b"},
		{"a connection over the operator's credential", map[string]Credential{
			"a": {Type: CredentialBasic, Username: "u", Secret: testSecret},
		}, HTTPConfig{CredentialHeader: "authorization", Credential: "operator"}, "body.connections.a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			h := newTestHTTP(t, func(w http.ResponseWriter, r *http.Request) { called = true; answer200("0")(w, r) }, tc.cfg)
			_, err := h.Invoke(context.Background(), withConnections(tc.creds))
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != apierr.ValidationFailed || len(ae.Errors) != 1 || ae.Errors[0].Location != tc.slot {
				t.Fatalf("want validation_failed at %s, got %#v", tc.slot, err)
			}
			if called || strings.Contains(fmt.Sprint(ae.Detail, ae.Errors), testSecret) {
				t.Fatalf("called %v, error %v", called, ae.Errors)
			}
		})
	}
}

func TestA401ToACallWithConnectionsIsACredentialRejection(t *testing.T) {
	h := newTestHTTP(t, status(401, nil, ""), HTTPConfig{})
	_, err := h.Invoke(context.Background(), withConnections(map[string]Credential{"a": {Type: CredentialBearer, Secret: testSecret}}))
	if !errors.Is(err, ErrCredentialRejected) || !errors.Is(err, ErrBadUpstream) {
		t.Fatalf("got %v", err)
	}
	if _, err := h.Invoke(context.Background(), testRequest()); errors.Is(err, ErrCredentialRejected) || !errors.Is(err, ErrBadUpstream) {
		t.Fatalf("without connections: got %v", err)
	}
}

func TestACredentialNeverPrints(t *testing.T) {
	r := withConnections(map[string]Credential{"a": {ConnectionID: "con_1", Version: 2, Type: CredentialBasic, Username: "ada", Secret: testSecret}})
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("call", "request", r, "cred", r.Connections["a"])
	encoded, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{
		"%v": fmt.Sprintf("%v", r), "%+v": fmt.Sprintf("%+v", r), "%#v": fmt.Sprintf("%#v", r),
		//lint:ignore S1025 the rule is about what each fmt verb prints, whichever method fmt picks
		"%s": fmt.Sprintf("%s", r.Connections["a"]), "%q": fmt.Sprintf("%q", r.Connections["a"]),
		"slog": logged.String(), "json": string(encoded),
	} {
		if strings.Contains(out, testSecret) || strings.Contains(out, "ada") {
			t.Errorf("%s prints the credential: %s", name, out)
		}
		if !strings.Contains(out, "con_1") {
			t.Errorf("%s hides which connection it was: %s", name, out)
		}
	}
}

func TestCheckHeaderName(t *testing.T) {
	for name, ok := range map[string]bool{
		"X-API-Key": true, "authorization": true, "x_vendor.key~1": true,
		"": false, strings.Repeat("x", 65): false, "X Key": false, "X-Key:": false, "X-Ké": false,
		"Host": false, "content-length": false, "X-Request-Id": false, "X-Max-Charge-Credits": false, "Transfer-Encoding": false,
	} {
		if err := CheckHeaderName(name); (err == nil) != ok {
			t.Errorf("CheckHeaderName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}
