package connectionsapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/harness/apitest"
)

// The idempotency record of a create holds no unkeyed
// hash of its body, so a reader of the store cannot test guesses of the
// password against it; the same request still replays.
func TestTheIdempotencyRecordCannotTestAPasswordGuess(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, rec := e.RootKey(100, nil)
		body := []byte(`{"label":"login","type":"basic","serviceIds":["core-research"],"credentials":{"username":"ada","password":"hunter2"}}`)
		idem := apitest.Idem()
		req := apitest.Req{Method: "POST", Path: "/v1/connections", Key: root, Idem: idem, Body: body,
			Headers: map[string]string{"Content-Type": "application/json"}}
		first := e.Must(e.Do(req), 201)
		if again := e.Must(e.Do(req), 201); again.Header.Get("Idempotent-Replayed") != "true" || string(again.Raw) != string(first.Raw) {
			t.Fatalf("the retry was not replayed: %v %s", again.Header, again.Raw)
		}
		it, err := e.Store.Get(context.Background(), store.Key{PK: "idem#" + rec.Str("id") + "#" + idem, SK: "idem"})
		if err != nil {
			t.Fatal(err)
		}
		fp := it.String("fp")
		plain := sha256.Sum256(body)
		for _, guess := range []string{
			idempotency.Fingerprint("POST", "/v1/connections", body, http.Header{"Content-Type": {"application/json"}}),
			idempotency.Fingerprint("POST", "/connections", body, http.Header{"Content-Type": {"application/json"}}),
			hex.EncodeToString(plain[:]),
		} {
			if fp == "" || strings.EqualFold(fp, guess) || find(e.Writes(), guess) != nil {
				t.Fatalf("the store holds the unkeyed digest %s of the body", guess)
			}
		}
	})
}

// A create or rotation whose credentials repeat a key
// is refused without naming the key, in the answer, its replay and the
// stored idempotency record.
func TestARepeatedCredentialsKeyIsRefusedUnnamed(t *testing.T) {
	const secret = "S9pastedASaKEY0123456789"
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(100, nil)
		ct := map[string]string{"Content-Type": "application/json"}
		con := e.Must(create(e, root, nil, bearer("tok-0123456789-wxyz")), 201)
		var answers [][]byte
		for _, req := range []apitest.Req{
			{Method: "POST", Path: "/v1/connections", Body: []byte(`{"label":"x","type":"bearer","serviceIds":["core-research"],"credentials":{"` + secret + `":"a","` + secret + `":"b"}}`)},
			{Method: "POST", Path: "/v1/connections", Body: []byte(`{"label":"x","type":"bearer","serviceIds":["core-research"],"credentials":{"token":"a","TOKEN":"` + secret + `"}}`)},
			{Method: "PATCH", Path: "/v1/connections/" + con.Str("id"), Body: []byte(`{"credentials":{"` + secret + `":"a","` + secret + `":"b"}}`)},
		} {
			req.Key, req.Idem, req.Headers = root, apitest.Idem(), ct
			first := e.Must(e.Do(req), 400, "validation_failed")
			replay := e.Must(e.Do(req), 400, "validation_failed")
			if replay.Header.Get("Idempotent-Replayed") != "true" || !strings.Contains(string(first.Raw), `"location":"body.credentials"`) {
				t.Fatalf("%s %s: %s, replay %v", req.Method, req.Path, first.Raw, replay.Header)
			}
			answers = append(answers, first.Raw, replay.Raw)
		}
		for where, haystack := range map[string][][]byte{"a response": answers, "a store write": e.Writes(), "the server log": {[]byte(e.Logs.String())}} {
			if needle := find(haystack, secret); needle != nil {
				t.Fatalf("%s holds the repeated key %q (as %q)", where, secret, needle)
			}
		}
	})
}
