// Package idempotency makes retried writes safe (spec 5.6, CONTRACT
// "Idempotency"): a conditional write claims an Idempotency-Key for one API
// key before the operation runs, the operation's response is stored on
// completion and replayed for 24 hours, and a claim whose process died
// expires with the request deadline so a retry can proceed.
package idempotency

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"time"

	"platformapi/shared/store"
)

// Retention is how long a completed response is replayed.
const Retention = 24 * time.Hour

// ErrReused: the key was used with a different request.
var ErrReused = errors.New("idempotency: key reused with different input")

// InProgressError: the first request with this key is still running.
type InProgressError struct{ RetryAfterSeconds int }

func (e *InProgressError) Error() string { return "idempotency: request in progress" }

// Fingerprint identifies a request's input: method, path with query, body,
// and the project and end-user headers. Parts are length-prefixed so no two
// different inputs can produce the same byte stream.
func Fingerprint(method, pathQuery string, body []byte, project, endUser string) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(method), []byte(pathQuery), body, []byte(project), []byte(endUser)} {
		writePart(h, part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writePart(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// Response is a stored operation response. A response that carries a
// secret (a new key, a webhook's signing secret) is stored with its body
// sealed (Sealed instead of Body), never in clear.
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    []byte            `json:"body,omitempty"`
	Sealed  []byte            `json:"sealed,omitempty"`
}

// Claim is a held Idempotency-Key.
type Claim struct {
	key   store.Key
	token string
}

// Store keeps claims and responses on the item store.
type Store struct {
	st       store.Store
	now      func() time.Time
	claimTTL time.Duration
}

// New builds the store; claimTTL bounds an in-progress claim (the request
// deadline plus a margin).
func New(st store.Store, now func() time.Time, claimTTL time.Duration) *Store {
	return &Store{st: st, now: now, claimTTL: claimTTL}
}

func itemKey(scope, key string) store.Key {
	return store.Key{PK: "idem#" + scope + "#" + key, SK: "idem"}
}

// Claim takes the key for this request, or returns the stored response to
// replay, ErrReused, or *InProgressError. scope is the API key's id, so
// sibling keys never see each other's responses.
func (s *Store) Claim(ctx context.Context, scope, key, fingerprint string) (*Claim, *Response, error) {
	k := itemKey(scope, key)
	for attempt := 0; attempt < 3; attempt++ {
		now := s.now()
		c := &Claim{key: k, token: newToken()}
		it := store.NewItem(k)
		it["state"] = "running"
		it["fp"] = fingerprint
		it["token"] = c.token
		it[store.AttrExpiresAt] = now.Add(s.claimTTL).Unix()
		err := s.st.Put(ctx, it, store.NotExists())
		if err == nil {
			return c, nil, nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return nil, nil, fmt.Errorf("idempotency: claim: %w", err)
		}
		cur, err := s.st.Get(ctx, k)
		if errors.Is(err, store.ErrNotFound) {
			continue // expired or abandoned between the two calls: claim again
		}
		if err != nil {
			return nil, nil, fmt.Errorf("idempotency: read claim: %w", err)
		}
		if cur.String("token") == c.token {
			// Our own write, applied although its answer was lost and the
			// SDK's retry then failed the condition: the claim is ours.
			return c, nil, nil
		}
		if cur.String("fp") != fingerprint {
			return nil, nil, ErrReused
		}
		if cur.String("state") == "running" {
			wait := time.Unix(cur.Int(store.AttrExpiresAt), 0).Sub(now)
			return nil, nil, &InProgressError{RetryAfterSeconds: max(1, int(wait.Seconds()+0.999))}
		}
		var resp Response
		if err := json.Unmarshal(cur.Bytes("response"), &resp); err != nil {
			return nil, nil, fmt.Errorf("idempotency: decode stored response: %w", err)
		}
		return nil, &resp, nil
	}
	return nil, nil, &InProgressError{RetryAfterSeconds: 1}
}

// Complete stores the response for replay. It succeeds only while the claim
// is still this request's (a claim that expired and was retaken belongs to
// the retry).
func (s *Store) Complete(ctx context.Context, c *Claim, resp Response) error {
	doc, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	_, err = s.st.Update(ctx, c.key, store.Update{Set: map[string]any{
		"state": "done", "response": doc, store.AttrExpiresAt: s.now().Add(Retention).Unix(),
	}}, store.AttrEquals("token", c.token))
	if err != nil {
		return fmt.Errorf("idempotency: complete: %w", err)
	}
	return nil
}

// Abandon frees the claim so that a retry runs the operation again (used for
// responses that must not be stored).
func (s *Store) Abandon(ctx context.Context, c *Claim) error {
	err := s.st.Delete(ctx, c.key, store.AttrEquals("token", c.token))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("idempotency: abandon: %w", err)
	}
	return nil
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
