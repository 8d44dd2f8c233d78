package redact_test

import (
	"strings"
	"testing"
	"time"

	"platformapi/shared/base/redact"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys"
)

var now = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// secret is a real API key secret of a depth-2 key.
func secret(t testing.TB) string {
	k := &keys.Key{ID: "key_01JZ3NDEKTSV4RRFFQ69G5FAVA", AccountID: "acct_01JZ3NDEKTSV4RRFFQ69G5FAVB", Ancestors: []string{"key_01JZ3NDEKTSV4RRFFQ69G5FAVC"}}
	s, _ := keys.NewSecret(k)
	return s
}

func token(t testing.TB) string {
	sg, err := credittoken.NewSigner(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := sg.Mint(5_000_000, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestSecretShapedPartsOfALogLineAreRedacted: every shape of secret the
// platform issues, and long random tokens, leave the line; the rest stays.
func TestSecretShapedPartsOfALogLineAreRedacted(t *testing.T) {
	psk, ct := secret(t), token(t)
	for _, tc := range []struct{ name, in, want string }{
		{"key secret in a URL path", "GET /v1/api-keys/" + psk + "/revoke 404", "GET /v1/api-keys/psk_[REDACTED]/revoke 404"},
		{"key secret as the end user", `endUser="` + psk + `"`, `endUser="psk_[REDACTED]"`},
		{"key secret glued to text", "x" + psk + ".", "xpsk_[REDACTED]."},
		{"credit token", "token=" + ct + "&x=1", "token=ct1.[REDACTED]&x=1"},
		{"webhook secret", "whsec_Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eA==", "whsec_[REDACTED]"},
		{"bearer token of any length", "Authorization: Bearer abc.def", "Authorization: Bearer [REDACTED]"},
		{"bearer in lower case", "authorization=bearer tok123,", "authorization=Bearer [REDACTED],"},
		{"hex digest", "sig=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "sig=[REDACTED]"},
		{"base64url random", "k=Zm9vYmFy-YmF6cXV4_cXV1eHF1dXhxdXV4cXV1eA9", "k=[REDACTED]"},
		{"standard base64 with padding", "k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJA+/==", "k=[REDACTED]/=="},
		{"ids stay", "/v1/projects/prj_01JZ3NDEKTSV4RRFFQ69G5FAVA/files/acct_01JZ3NDEKTSV4RRFFQ69G5FAVB", "/v1/projects/prj_01JZ3NDEKTSV4RRFFQ69G5FAVA/files/acct_01JZ3NDEKTSV4RRFFQ69G5FAVB"},
		{"operation names stay", "op=services.invoke.cloud-superbrain.memory.write", "op=services.invoke.cloud-superbrain.memory.write"},
		{"request ids stay", "request 550e8400-e29b-41d4-a716-446655440000 done", "request 550e8400-e29b-41d4-a716-446655440000 done"},
		{"long words stay", "pneumonoultramicroscopicsilicovolcanoconiosis_and_more", "pneumonoultramicroscopicsilicovolcanoconiosis_and_more"},
		{"short prefixes stay", "psk_ is the prefix, ct1. the other", "psk_ is the prefix, ct1. the other"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := redact.Secrets(tc.in); got != tc.want {
				t.Fatalf("Secrets(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzSecrets: whatever surrounds a real secret or token, no part of its
// random material survives, and redacting twice changes nothing more.
func FuzzSecrets(f *testing.F) {
	f.Add("GET /v1/", "/x", true)
	f.Add("Bearer ", "", false)
	f.Add("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ZZ", true)
	f.Add("end-user=", `"`, false)
	psk, ct := secret(f), token(f)
	f.Fuzz(func(t *testing.T, before, after string, useKey bool) {
		s, random := ct, ct[len("ct1."):]
		if useKey {
			s = psk
			random = psk[len("psk_key_")+26+1:][:43] // psk_key_<ulid>_<random>_acct_…
		}
		line := before + s + after
		out := redact.Secrets(line)
		if strings.Contains(out, random) {
			t.Fatalf("secret material survives in %q", out)
		}
		if again := redact.Secrets(out); again != out {
			t.Fatalf("not idempotent: %q -> %q", out, again)
		}
	})
}
