package connections_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/connections"
)

// leak is a secret-looking value used in invalid requests: no error may
// repeat it, or any part of it that identifies it.
const leak = "LEAKYsecretVALUE0123456789"

func TestEveryCreateRuleIsEnforced(t *testing.T) {
	valid := func() connections.CreateRequest {
		return connections.CreateRequest{Label: "vendor", Type: "api_key", Credentials: json.RawMessage(`{"key":"k-` + leak + `"}`), ServiceIDs: []string{"core-research"}}
	}
	with := func(change func(*connections.CreateRequest)) connections.CreateRequest {
		r := valid()
		change(&r)
		return r
	}
	creds := func(typ, body string) connections.CreateRequest {
		return with(func(r *connections.CreateRequest) { r.Type, r.Credentials = typ, json.RawMessage(body) })
	}
	metadata := func(n int) map[string]string {
		md := map[string]string{}
		for i := range n {
			md[fmt.Sprint("k", i)] = "v"
		}
		return md
	}
	long := strings.Repeat("a", connections.MaxSecret+1)
	for _, tc := range []struct {
		name     string
		req      connections.CreateRequest
		location string
	}{
		{"label is required", with(func(r *connections.CreateRequest) { r.Label = "" }), "body.label"},
		{"label is at most 128 characters", with(func(r *connections.CreateRequest) { r.Label = strings.Repeat("é", 129) }), "body.label"},
		{"label has no control characters", with(func(r *connections.CreateRequest) { r.Label = "a\nb" }), "body.label"},
		{"type is one of four", with(func(r *connections.CreateRequest) { r.Type = "password" }), "body.type"},
		{"credentials are required", with(func(r *connections.CreateRequest) { r.Credentials = nil }), "body.credentials"},
		{"credentials are an object", creds("bearer", `"`+leak+`"`), "body.credentials"},
		{"credentials are one object", creds("bearer", `{"token":"`+leak+`"} {}`), "body.credentials"},
		{"credentials end with the object", creds("bearer", `{"token":"`+leak+`"}}`), "body.credentials"},
		{"credentials are valid JSON", creds("bearer", `{"token":"`+leak+`"`), "body.credentials"},
		{"an unknown field is refused, unnamed", creds("bearer", `{"token":"t-`+leak+`","`+leak+`":"x"}`), "body.credentials"},
		{"a field of another type is refused", creds("bearer", `{"token":"t-`+leak+`","key":"x"}`), "body.credentials"},
		{"a repeated field is refused, unnamed", creds("bearer", `{"token":"a","`+leak+`":"x","`+leak+`":"y"}`), "body.credentials"},
		{"a repeated known field is refused", creds("bearer", `{"token":"a-`+leak+`","token":"b-`+leak+`"}`), "body.credentials"},
		{"a field repeated in another case is refused", creds("bearer", `{"token":"a-`+leak+`","Token":"b"}`), "body.credentials"},
		{"api_key needs key", creds("api_key", `{"headerName":"X-Key"}`), "body.credentials.key"},
		{"api_key key is a string", creds("api_key", `{"key":12345}`), "body.credentials.key"},
		{"api_key key is not empty", creds("api_key", `{"key":""}`), "body.credentials.key"},
		{"api_key key is at most 8 KiB", creds("api_key", `{"key":"`+long+`"}`), "body.credentials.key"},
		{"api_key key is printable ASCII", creds("api_key", `{"key":"`+leak+`\r\nX-Evil: 1"}`), "body.credentials.key"},
		{"api_key key has no outer spaces", creds("api_key", `{"key":" `+leak+`"}`), "body.credentials.key"},
		{"api_key headerName is a token", creds("api_key", `{"key":"`+leak+`","headerName":"X Key"}`), "body.credentials.headerName"},
		{"api_key headerName is not reserved", creds("api_key", `{"key":"`+leak+`","headerName":"Host"}`), "body.credentials.headerName"},
		{"bearer needs token", creds("bearer", `{}`), "body.credentials.token"},
		{"bearer token null is missing", creds("bearer", `{"token":null}`), "body.credentials.token"},
		{"bearer token is non-ASCII free", creds("bearer", `{"token":"`+leak+`é"}`), "body.credentials.token"},
		{"basic needs username", creds("basic", `{"password":"`+leak+`"}`), "body.credentials.username"},
		{"basic needs password", creds("basic", `{"username":"ada"}`), "body.credentials.password"},
		{"basic username has no colon", creds("basic", `{"username":"a:b","password":"`+leak+`"}`), "body.credentials.username"},
		{"basic password has no control characters", creds("basic", `{"username":"ada","password":"`+leak+`\u0000"}`), "body.credentials.password"},
		{"basic password is at most 8 KiB", creds("basic", `{"username":"ada","password":"`+long+`"}`), "body.credentials.password"},
		{"oauth2 needs accessToken", creds("oauth2", `{"refreshToken":"`+leak+`"}`), "body.credentials.accessToken"},
		{"oauth2 expiresAt is RFC 3339", creds("oauth2", `{"accessToken":"`+leak+`","expiresAt":"tomorrow"}`), "body.credentials.expiresAt"},
		{"oauth2 tokenUrl is https", creds("oauth2", `{"accessToken":"`+leak+`","tokenUrl":"http://auth.example.com/token"}`), "body.credentials.tokenUrl"},
		{"oauth2 tokenUrl has no user information", creds("oauth2", `{"accessToken":"a-`+leak+`","tokenUrl":"https://u:`+leak+`@auth.example.com/"}`), "body.credentials.tokenUrl"},
		{"oauth2 clientSecret is at most 8 KiB", creds("oauth2", `{"accessToken":"`+leak+`","clientSecret":"`+long+`"}`), "body.credentials.clientSecret"},
		{"oauth2 clientId is bounded", creds("oauth2", `{"accessToken":"`+leak+`","clientId":"`+strings.Repeat("c", 257)+`"}`), "body.credentials.clientId"},
		{"serviceIds are required", with(func(r *connections.CreateRequest) { r.ServiceIDs = nil }), "body.serviceIds"},
		{"serviceIds are at most 32", with(func(r *connections.CreateRequest) { r.ServiceIDs = make([]string, 33) }), "body.serviceIds"},
		{"serviceIds are known services", with(func(r *connections.CreateRequest) { r.ServiceIDs = []string{"core-research", "nope"} }), "body.serviceIds[1]"},
		{"metadata is at most 16 pairs", with(func(r *connections.CreateRequest) { r.Metadata = metadata(17) }), "body.metadata"},
		{"metadata keys are not empty", with(func(r *connections.CreateRequest) { r.Metadata = map[string]string{"": "v"} }), "body.metadata"},
		{"metadata values are bounded", with(func(r *connections.CreateRequest) { r.Metadata = map[string]string{"k": strings.Repeat("v", 513)} }), "body.metadata.k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, e env) {
				_, err := e.repo.Create(ctx, acct, prj, tc.req)
				ae := wantCode(t, err, apierr.ValidationFailed)
				if len(ae.Errors) != 1 || ae.Errors[0].Location != tc.location {
					t.Fatalf("errors %+v, want one at %s", ae.Errors, tc.location)
				}
				if text := fmt.Sprintf("%s %v %+v", ae.Error(), ae.Detail, ae.Errors); strings.Contains(text, leak[:12]) {
					t.Fatalf("the error repeats the secret: %s", text)
				}
				if e.st.writes.Load() != 0 {
					t.Fatal("an invalid request wrote")
				}
			})
		})
	}
}

// A request body whose credentials repeat a key is
// refused at body.credentials without the key or a value, wherever the
// repetition sits and however the member is spelt (encoding/json reads
// "Credentials" and "credentialſ" as the credentials); a repetition
// elsewhere is left to the generic decoder.
func TestABodyRepeatingACredentialsKeyIsRefusedUnnamed(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		refused    bool
	}{
		{"exact", `{"type":"bearer","credentials":{"` + leak + `":"a","` + leak + `":"b"}}`, true},
		{"case variant", `{"credentials":{"tok` + leak + `":"a","TOK` + leak + `":"b"}}`, true},
		{"nested", `{"credentials":{"token":{"` + leak + `":1,"` + leak + `":2}}}`, true},
		{"in an array", `{"credentials":{"token":[{"` + leak + `":1,"` + leak + `":2}]}}`, true},
		{"member in another case", `{"Credentials":{"` + leak + `":"a","` + leak + `":"b"}}`, true},
		{"member with a long s", `{"credentialſ":{"` + leak + `":"a","` + leak + `":"b"}}`, true},
		{"in the first of two members", `{"credentials":{"` + leak + `":"a","` + leak + `":"b"},"credentials":{}}`, true},
		{"after another field's repetition", `{"label":"a","label":"b","credentials":{"` + leak + `":1,"` + leak + `":2}}`, true},
		{"in the label", `{"label":"a","label":"b","credentials":{"token":"t"}}`, false},
		{"in the metadata", `{"metadata":{"k":"a","k":"b"},"credentials":{"token":"t"}}`, false},
		{"none", `{"type":"bearer","credentials":{"token":"` + leak + `"}}`, false},
		{"not an object", `[{"credentials":{"a":1,"a":2}}]`, false},
		{"not JSON", `{"credentials":`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := connections.CheckBody([]byte(tc.body))
			if !tc.refused {
				if err != nil {
					t.Fatalf("CheckBody = %v, want nil", err)
				}
				return
			}
			ae := wantCode(t, err, apierr.ValidationFailed)
			if len(ae.Errors) != 1 || ae.Errors[0].Location != "body.credentials" {
				t.Fatalf("errors %+v, want one at body.credentials", ae.Errors)
			}
			if text := fmt.Sprintf("%s %v %+v", ae.Error(), ae.Detail, ae.Errors); strings.Contains(text, leak[:12]) || strings.Contains(strings.ToLower(text), strings.ToLower(leak[:12])) {
				t.Fatalf("the error repeats the key: %s", text)
			}
		})
	}
}

func TestEachTypeAcceptsItsFieldsAndHintsAtLongSecretsOnly(t *testing.T) {
	for _, tc := range []struct {
		typ, creds, hint string
	}{
		{"api_key", `{"key":"sk_live_0123456789abcd"}`, "abcd"},
		{"api_key", `{"key":"sk_live_0123456789abcd","headerName":"X-Vendor-Key"}`, "abcd"},
		{"bearer", `{"token":"tok-0123456789-wxyz"}`, "wxyz"},
		{"bearer", `{"token":"short-12345"}`, ""},
		{"basic", `{"username":"ada","password":"pässwörd-0123-ñ€"}`, "3-ñ€"},
		{"oauth2", `{"accessToken":"at-0123456789-lmno"}`, "lmno"},
		{"oauth2", `{"accessToken":"at-0123456789-lmno","refreshToken":"rt","expiresAt":"2026-04-01T00:00:00Z","tokenUrl":"https://auth.example.com/token","clientId":"cid","clientSecret":"cs"}`, "lmno"},
	} {
		t.Run(tc.typ+" "+tc.creds, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, e env) {
				c := create(t, e, prj, connections.CreateRequest{Label: "v", Type: tc.typ, Credentials: json.RawMessage(tc.creds), ServiceIDs: []string{"core-research", "core-research"}})
				if c.CredentialHint != tc.hint || c.CredentialVersion != 1 || c.Status != "active" || len(c.ServiceIDs) != 1 || *c.ProjectID != prj {
					t.Fatalf("got %+v", c)
				}
				if e.st.writes.Load() != 1 {
					t.Fatalf("create made %d writes, want one transaction", e.st.writes.Load())
				}
			})
		})
	}
}

func TestEveryUpdateRuleIsEnforced(t *testing.T) {
	for _, tc := range []struct {
		name     string
		req      connections.UpdateRequest
		location string
	}{
		{"an empty patch changes nothing", connections.UpdateRequest{}, "body"},
		{"null credentials are absent", connections.UpdateRequest{Credentials: json.RawMessage(" null")}, "body"},
		{"label is bounded", connections.UpdateRequest{Label: ptr(strings.Repeat("l", 129))}, "body.label"},
		{"status is active or disabled", connections.UpdateRequest{Status: ptr("deleted")}, "body.status"},
		{"credentials follow the connection's type", connections.UpdateRequest{Credentials: json.RawMessage(`{"key":"` + leak + `"}`)}, "body.credentials"},
		{"credentials are strict", connections.UpdateRequest{Credentials: json.RawMessage(`{"token":"` + leak + `","extra":"1"}`)}, "body.credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, e env) {
				c := create(t, e, prj, bearer("tok-original-0123456789"))
				_, _, err := e.repo.Update(ctx, acct, prj, c.ID, tc.req)
				ae := wantCode(t, err, apierr.ValidationFailed)
				if len(ae.Errors) != 1 || ae.Errors[0].Location != tc.location || strings.Contains(fmt.Sprint(ae.Detail, ae.Errors), leak[:12]) {
					t.Fatalf("errors %+v, want one at %s", ae.Errors, tc.location)
				}
				if got, _ := e.repo.Get(ctx, acct, prj, c.ID); got.CredentialVersion != 1 || got.UpdatedAt != c.UpdatedAt {
					t.Fatalf("a refused patch changed %+v", got)
				}
			})
		})
	}
}
