package connections_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/connections"
)

func TestResolveRules(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		active := create(t, e, prj, connections.CreateRequest{Label: "k", Type: "api_key", Credentials: json.RawMessage(`{"key":"key-0123456789","headerName":"X-Vendor"}`), ServiceIDs: []string{"core-research", "managed-agents"}})
		basic := create(t, e, prj, connections.CreateRequest{Label: "b", Type: "basic", Credentials: json.RawMessage(`{"username":"ada","password":"pw-0123456789"}`), ServiceIDs: []string{"core-research"}})
		disabled := create(t, e, prj, bearer("tok-0123456789"))
		if _, _, err := e.repo.Update(ctx, acct, prj, disabled.ID, connections.UpdateRequest{Status: ptr("disabled")}); err != nil {
			t.Fatal(err)
		}
		otherService := create(t, e, prj, bearer("tok-0123456789", "managed-agents"))
		elsewhere, err := e.repo.Create(ctx, acct, other, bearer("tok-0123456789"))
		if err != nil {
			t.Fatal(err)
		}
		tooMany := map[string]string{}
		for i := range connections.MaxSlots + 1 {
			tooMany[fmt.Sprint("s", i)] = active.ID
		}
		for _, tc := range []struct {
			name  string
			slots map[string]string
			code  apierr.Code
		}{
			{"a malformed id is not found", map[string]string{"a": "con_nope"}, apierr.NotFound},
			{"an unknown id is not found", map[string]string{"a": "con_01JZZZZZZZZZZZZZZZZZZZZZZZ"}, apierr.NotFound},
			{"another project's connection is not found", map[string]string{"a": elsewhere.ID}, apierr.NotFound},
			{"a disabled connection is refused", map[string]string{"a": disabled.ID}, apierr.ConnectionDisabled},
			{"a connection without the service is refused", map[string]string{"a": otherService.ID}, apierr.ConnectionNotAllowed},
			{"one bad slot refuses the call", map[string]string{"a": active.ID, "b": disabled.ID}, apierr.ConnectionDisabled},
			{"slots are checked in name order", map[string]string{"a": otherService.ID, "b": disabled.ID}, apierr.ConnectionNotAllowed},
			{"a slot name is bounded", map[string]string{"a b": active.ID}, apierr.ValidationFailed},
			{"slots are bounded", tooMany, apierr.ValidationFailed},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := e.repo.Resolve(ctx, acct, prj, "core-research", tc.slots)
				ae := wantCode(t, err, tc.code)
				if got != nil || strings.Contains(ae.Error(), "0123456789") {
					t.Fatalf("got %v, %v", got, ae)
				}
			})
		}
		t.Run("usable connections open, one per slot", func(t *testing.T) {
			got, err := e.repo.Resolve(ctx, acct, prj, "core-research", map[string]string{"vendor": active.ID, "again": active.ID, "login": basic.ID})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]connections.Credential{
				"vendor": {ConnectionID: active.ID, Version: 1, Type: "api_key", HeaderName: "X-Vendor", Secret: "key-0123456789"},
				"again":  {ConnectionID: active.ID, Version: 1, Type: "api_key", HeaderName: "X-Vendor", Secret: "key-0123456789"},
				"login":  {ConnectionID: basic.ID, Version: 1, Type: "basic", Username: "ada", Secret: "pw-0123456789"},
			}
			if len(got) != len(want) {
				t.Fatalf("got %d slots", len(got))
			}
			for slot, w := range want {
				if got[slot] != w {
					t.Errorf("%s: got %#v", slot, got[slot])
				}
			}
		})
		t.Run("no slots, nothing to do", func(t *testing.T) {
			if got, err := e.repo.Resolve(ctx, acct, prj, "core-research", nil); got != nil || err != nil {
				t.Fatal(got, err)
			}
		})
	})
}

func TestAnAPIKeyWithoutHeaderNameUsesXAPIKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, connections.CreateRequest{Label: "k", Type: "api_key", Credentials: json.RawMessage(`{"key":"key-0123456789"}`), ServiceIDs: []string{"core-research"}})
		if cred, err := resolveOne(e, prj, c.ID); err != nil || cred.HeaderName != "X-API-Key" {
			t.Fatal(cred, err)
		}
	})
}

func TestResolveWritesLastUsedAtAtMostOncePerMinute(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-0123456789"))
		for _, step := range []struct {
			advance time.Duration
			writes  int64
		}{{0, 1}, {time.Second, 0}, {58 * time.Second, 0}, {time.Second, 1}, {30 * time.Second, 0}} {
			e.clock.Advance(step.advance)
			before := e.st.writes.Load()
			if _, err := resolveOne(e, prj, c.ID); err != nil {
				t.Fatal(err)
			}
			if w := e.st.writes.Load() - before; w != step.writes {
				t.Fatalf("after +%s: %d writes, want %d", step.advance, w, step.writes)
			}
		}
		got, _ := e.repo.Get(ctx, acct, prj, c.ID)
		if want := e.clock.Now().Add(-30 * time.Second); got.LastUsedAt == nil || !got.LastUsedAt.Equal(want) {
			t.Fatalf("lastUsedAt %v, want %v", got.LastUsedAt, want)
		}
		if !got.UpdatedAt.Equal(c.UpdatedAt) {
			t.Fatal("using a connection changed updatedAt")
		}
	})
}

func TestA401MarksTheVersionThatWasRefusedUntilARotation(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-0123456789"))
		if err := e.repo.MarkUnauthorized(ctx, acct, prj, c.ID, 1); err != nil {
			t.Fatal(err)
		}
		got, _ := e.repo.Get(ctx, acct, prj, c.ID)
		if got.StatusReason == nil || *got.StatusReason != connections.ReasonUnauthorized || got.Status != "active" {
			t.Fatalf("marked: %+v", got)
		}
		if _, _, err := e.repo.Update(ctx, acct, prj, c.ID, connections.UpdateRequest{Label: ptr("relabelled")}); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.repo.Get(ctx, acct, prj, c.ID); got.StatusReason == nil {
			t.Fatal("a relabel cleared the reason")
		}
		if _, _, err := e.repo.Update(ctx, acct, prj, c.ID, connections.UpdateRequest{Credentials: json.RawMessage(`{"token":"tok-new-0123456789"}`)}); err != nil {
			t.Fatal(err)
		}
		if err := e.repo.MarkUnauthorized(ctx, acct, prj, c.ID, 1); err != nil { // a late 401 for the replaced version
			t.Fatal(err)
		}
		if got, _ := e.repo.Get(ctx, acct, prj, c.ID); got.StatusReason != nil {
			t.Fatalf("reason %q survives the rotation", *got.StatusReason)
		}
		if err := e.repo.MarkUnauthorized(ctx, acct, other, c.ID, 2); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.repo.Get(ctx, acct, prj, c.ID); got.StatusReason != nil {
			t.Fatal("another project marked it")
		}
	})
}

func TestASealedVersionOpensOnlyForItsConnection(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		a := create(t, e, prj, bearer("tok-a-0123456789"))
		b := create(t, e, prj, bearer("tok-b-0123456789"))
		key := func(id string) store.Key { return store.Key{PK: "acct#" + acct, SK: "conv#" + id + "#0000000001"} }
		itA, err := e.st.Get(ctx, key(a.ID))
		if err != nil {
			t.Fatal(err)
		}
		moved := store.NewItem(key(b.ID))
		for k, v := range itA {
			if k != store.AttrPK && k != store.AttrSK {
				moved[k] = v
			}
		}
		if err := e.st.Put(ctx, moved); err != nil {
			t.Fatal(err)
		}
		if cred, err := resolveOne(e, prj, b.ID); err == nil {
			t.Fatalf("b opened a's sealed credentials: %v", cred)
		}
	})
}

// encodings are the forms in which a secret could sit in the raw store:
// plain, hex, and base64 (standard and URL alphabets, padded or not, at
// each of the three byte alignments it could have inside a longer value).
func encodings(secret string) [][]byte {
	out := [][]byte{[]byte(secret), []byte(hex.EncodeToString([]byte(secret))), []byte(strings.ToUpper(hex.EncodeToString([]byte(secret))))}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			s := enc.EncodeToString(append(bytes.Repeat([]byte{0}, k), secret...))
			start := 0
			if k > 0 {
				start = 4 // the first quantum mixes in the padding bytes
			}
			out = append(out, []byte(s[start:len(s)-4])) // the last may be padded or cut
		}
	}
	return out
}

func TestNoSecretReachesTheStoreOrAnyAnswer(t *testing.T) {
	secrets := []string{"FIRSTsecretKEY0123456789xyz", "SECONDrefreshTOKEN0123456789", "THIRDclientSECRET0123456789", "ROTATEDaccessTOKEN0123456789", "BASICpassWORD0123456789abc"}
	eachBackend(t, func(t *testing.T, e env) {
		var answers []any
		oauth := create(t, e, prj, connections.CreateRequest{Label: "o", Type: "oauth2", ServiceIDs: []string{"core-research"}, Credentials: json.RawMessage(
			`{"accessToken":"` + secrets[0] + `","refreshToken":"` + secrets[1] + `","clientSecret":"` + secrets[2] + `","clientId":"cid","tokenUrl":"https://auth.example.com/t"}`)})
		basic := create(t, e, prj, connections.CreateRequest{Label: "b", Type: "basic", ServiceIDs: []string{"core-research"}, Credentials: json.RawMessage(`{"username":"ada","password":"` + secrets[4] + `"}`)})
		answers = append(answers, oauth, basic)
		rotated, events, err := e.repo.Update(ctx, acct, prj, oauth.ID, connections.UpdateRequest{Credentials: json.RawMessage(`{"accessToken":"` + secrets[3] + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, rotated, events)
		list, _, err := e.repo.List(ctx, acct, prj, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, list)
		creds, err := e.repo.Resolve(ctx, acct, prj, "core-research", map[string]string{"o": oauth.ID, "b": basic.ID})
		if err != nil || creds["o"].Secret != secrets[3] || creds["b"].Secret != secrets[4] {
			t.Fatalf("resolve: %v", err)
		}
		_, err = e.repo.Resolve(ctx, acct, prj, "managed-agents", map[string]string{"o": oauth.ID})
		answers = append(answers, err.Error(), creds) // a Credential prints redacted
		_, err = e.repo.Create(ctx, acct, prj, connections.CreateRequest{Label: "x", Type: "bearer", ServiceIDs: []string{"core-research"}, Credentials: json.RawMessage(`{"token":"` + secrets[0] + `\n"}`)})
		answers = append(answers, err.Error(), err)

		// Before the delete: the sealed versions exist and hold nothing readable.
		search(t, "the raw store", e.raw(t), secrets)
		for _, c := range []*connections.Connection{oauth, basic} {
			if _, err := e.repo.Delete(ctx, acct, prj, c.ID); err != nil {
				t.Fatal(err)
			}
		}
		search(t, "the raw store after the deletes", e.raw(t), secrets)
		for _, a := range answers {
			text, _ := json.Marshal(a)
			search(t, "an answer", [][]byte{text, []byte(fmt.Sprintf("%v %+v %#v", a, a, a))}, secrets)
		}
		page, err := e.st.Query(ctx, store.Query{PK: "acct#" + acct})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("%d items survive deleting every connection: %v", len(page.Items), err)
		}
	})
}

func search(t *testing.T, where string, haystack [][]byte, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if needle := find(haystack, s); needle != nil {
			t.Fatalf("%s holds %q (as %q)", where, s, needle)
		}
	}
}

// find returns the encoding of secret found in haystack, or nil.
func find(haystack [][]byte, secret string) []byte {
	for _, needle := range encodings(secret) {
		for _, h := range haystack {
			if bytes.Contains(h, needle) {
				return needle
			}
		}
	}
	return nil
}

// The search above proves something only if it would find a stored secret
// in every form, on every backend.
func TestTheRawSearchFindsASecretInEveryEncoding(t *testing.T) {
	const secret = "PLANTEDsecret0123456789"
	forms := map[string]any{
		"plain string":       "x" + secret + "y",
		"bytes":              []byte("{\"k\":\"" + secret + "\"}"),
		"hex":                hex.EncodeToString([]byte("ab" + secret)),
		"base64 aligned":     base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64 offset 1":    base64.StdEncoding.EncodeToString([]byte("a" + secret + "zz")),
		"base64url offset 2": base64.RawURLEncoding.EncodeToString([]byte("ab" + secret)),
	}
	for name, v := range forms {
		t.Run(name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, e env) {
				it := store.NewItem(store.Key{PK: "acct#" + acct, SK: "planted"})
				it["value"] = v
				if err := e.st.Put(ctx, it); err != nil {
					t.Fatal(err)
				}
				if find(e.raw(t), secret) == nil {
					t.Fatal("the search missed it")
				}
			})
		})
	}
}

func TestAPinnedVersionIsUsedWhileItLastsThenTheCurrent(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-first-0123456789"))
		slots := map[string]string{"vendor": c.ID}
		pins, err := e.repo.Check(ctx, acct, prj, "core-research", slots)
		if err != nil || pins["vendor"] != 1 {
			t.Fatalf("check: %v %v", pins, err)
		}
		if _, _, err := e.repo.Update(ctx, acct, prj, c.ID, connections.UpdateRequest{Credentials: json.RawMessage(`{"token":"tok-second-0123456789"}`)}); err != nil {
			t.Fatal(err)
		}
		secretOf := func(pins map[string]int64) string {
			t.Helper()
			got, err := e.repo.ResolvePinned(ctx, acct, prj, "core-research", slots, pins)
			if err != nil {
				t.Fatal(err)
			}
			return got["vendor"].Secret
		}
		if s := secretOf(pins); s != "tok-first-0123456789" {
			t.Fatalf("pinned before the rotation, within 24 h: %q", s)
		}
		if s := secretOf(nil); s != "tok-second-0123456789" {
			t.Fatalf("unpinned: %q", s)
		}
		if s := secretOf(map[string]int64{"vendor": 2}); s != "tok-second-0123456789" {
			t.Fatalf("pinned to the current version: %q", s)
		}
		e.clock.Advance(connections.PreviousVersionTTL)
		if s := secretOf(pins); s != "tok-second-0123456789" {
			t.Fatalf("pinned version gone after 24 h: got %q, want the current one", s)
		}
		if _, _, err := e.repo.Update(ctx, acct, prj, c.ID, connections.UpdateRequest{Status: ptr("disabled")}); err != nil {
			t.Fatal(err)
		}
		_, err = e.repo.ResolvePinned(ctx, acct, prj, "core-research", slots, pins)
		wantCode(t, err, apierr.ConnectionDisabled)
	})
}

func TestCheckAppliesTheRulesAndWritesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-first-0123456789"))
		before := e.st.writes.Load()
		_, err := e.repo.Check(ctx, acct, prj, "managed-agents", map[string]string{"vendor": c.ID})
		wantCode(t, err, apierr.ConnectionNotAllowed)
		_, err = e.repo.Check(ctx, acct, other, "core-research", map[string]string{"vendor": c.ID})
		wantCode(t, err, apierr.NotFound)
		if pins, err := e.repo.Check(ctx, acct, prj, "core-research", nil); err != nil || pins != nil {
			t.Fatalf("no slots: %v %v", pins, err)
		}
		if _, err := e.repo.Check(ctx, acct, prj, "core-research", map[string]string{"vendor": c.ID}); err != nil {
			t.Fatal(err)
		}
		if n := e.st.writes.Load() - before; n != 0 {
			t.Fatalf("check wrote %d times", n)
		}
		if got, _ := e.repo.Get(ctx, acct, prj, c.ID); got.LastUsedAt != nil {
			t.Fatal("check recorded a use")
		}
	})
}

func TestMarkRejectedMarksOnlyOnARejectedCredential(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		a := create(t, e, prj, bearer("tok-a-0123456789"))
		b := create(t, e, prj, connections.CreateRequest{Label: "k", Type: "api_key", ServiceIDs: []string{"core-research"}, Credentials: json.RawMessage(`{"key":"key-b-0123456789"}`)})
		used, err := e.repo.Resolve(ctx, acct, prj, "core-research", map[string]string{"a": a.ID, "b": b.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []error{nil, upstream.ErrBadUpstream, &upstream.UnavailableError{}} {
			if err := e.repo.MarkRejected(ctx, acct, prj, used, other); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []*connections.Connection{a, b} {
			if got, _ := e.repo.Get(ctx, acct, prj, c.ID); got.StatusReason != nil {
				t.Fatalf("%s marked without a rejection", c.ID)
			}
		}
		rejected := fmt.Errorf("wrapped: %w", upstream.ErrCredentialRejected)
		if err := e.repo.MarkRejected(ctx, acct, prj, used, rejected); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*connections.Connection{a, b} {
			if got, _ := e.repo.Get(ctx, acct, prj, c.ID); got.StatusReason == nil || *got.StatusReason != connections.ReasonUnauthorized {
				t.Fatalf("%s not marked", c.ID)
			}
		}
	})
}
