// Package idempotency makes retried writes safe (docs/idempotency.md): a
// conditional write claims an Idempotency-Key for one API
// key before the operation runs, the operation's response is stored on
// completion and replayed for 24 hours, and a claim whose process died
// expires with the request deadline so a retry can proceed.
//
// The stored input fingerprint is keyed: HMAC-SHA-256, under a secret of
// the deployment sealed by the envelope port, of the caller's scope and the
// input's digest (Fingerprint). An unkeyed hash of a body would let anyone
// who reads the store test guesses of what it held (a connection's
// password) offline; the key makes every guess cost an envelope open.
//
// Storage (single table):
//
//	idemkey | fingerprint   "sealed": 32 random bytes sealed by the envelope
//	                        port, created on first use, opened once per
//	                        process
package idempotency

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/store"
)

// Retention is how long a completed response is replayed.
const Retention = 24 * time.Hour

// ErrReused: the key was used with a different request.
var ErrReused = errors.New("idempotency: key reused with different input")

// InProgressError: the first request with this key is still running.
type InProgressError struct{ RetryAfterSeconds int }

func (e *InProgressError) Error() string { return "idempotency: request in progress" }

// InputHeaders are the request headers an operation reads as input besides
// its body: the project and end user, the media
// type, and an upload's name, checksum and purpose. A retry that changes one
// of them is another request, so they are part of the fingerprint.
var InputHeaders = []string{
	"X-Service-Project", "X-Service-End-User", "Content-Type",
	"X-File-Name", "X-Content-Sha256", "X-Service-File-Purpose",
}

// Fingerprint digests a request's input: method, path with query, body and
// InputHeaders. Parts are length-prefixed so no two different inputs can
// produce the same byte stream. The digest is unkeyed and never stored:
// Store.Claim keys it.
func Fingerprint(method, pathQuery string, body []byte, header http.Header) string {
	h := sha256.New()
	writePart(h, []byte(method))
	writePart(h, []byte(pathQuery))
	writePart(h, body)
	for _, name := range InputHeaders {
		values := header.Values(name)
		if name == "Content-Type" && len(values) == 1 {
			values = []string{MediaType(values[0])}
		}
		// Header values hold no newline, so the join is unambiguous.
		writePart(h, []byte(strings.Join(values, "\n")))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// MediaType is a Content-Type as the operation reads it, so that a retry
// is the same request however its header is spelled: type, subtype and
// parameter names are case-insensitive (RFC 9110 8.3.1), parameters come
// in any order, and JSON is UTF-8 whatever its charset parameter says
// (RFC 8259 8.1), so `charset=utf-8` on a JSON type adds nothing. A value
// that does not parse is kept as sent.
func MediaType(v string) string {
	mt, params, err := mime.ParseMediaType(v)
	if err != nil {
		return v
	}
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		if cs, ok := params["charset"]; ok && strings.EqualFold(cs, "utf-8") {
			delete(params, "charset")
		}
	}
	return mime.FormatMediaType(mt, params)
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
	// Charged is what the operation charged and which request's audit
	// event reports it, for a response whose operation charged credits.
	Charged *Charged `json:"charged,omitempty"`
	// Owed are the charges of earlier attempts of the call that this
	// answer's request found and owed to those attempts' events: a replay
	// writes them again too, since the request may have died before it did.
	Owed []Charged `json:"owed,omitempty"`
}

// Charged is a stored response's charge and the request that made it. The
// process that stored the response may die before that request's audit
// event is written; a replay then writes it again, under the same id, so
// the charge has its event once whatever the crash.
type Charged struct {
	Micro     int64  `json:"micro"`
	RequestID string `json:"requestId"`
	// AtMilli is the event's occurrence, in Unix milliseconds: with the
	// request id it names the event.
	AtMilli int64 `json:"atMilli"`
}

// Claim is a held Idempotency-Key.
type Claim struct {
	key   store.Key
	token string
}

// Store keeps claims and responses on the item store.
type Store struct {
	st       store.Store
	sealer   envelope.Sealer
	now      func() time.Time
	claimTTL time.Duration

	mu     sync.Mutex
	secret []byte // the opened fingerprint key, once read
}

// New builds the store; claimTTL bounds an in-progress claim (the request
// deadline plus a margin). sealer keeps the fingerprint key; a process
// without one (an AWS function not granted the envelope key) stores the
// unkeyed digest, as it holds no secret to protect it with.
func New(st store.Store, sealer envelope.Sealer, now func() time.Time, claimTTL time.Duration) *Store {
	return &Store{st: st, sealer: sealer, now: now, claimTTL: claimTTL}
}

var fingerprintKey = store.Key{PK: "idemkey", SK: "fingerprint"}

// fingerprintBinding is the associated data of the sealed fingerprint key.
var fingerprintBinding = []byte("platform-api/idempotency-fingerprint-key/v1")

// keyed is the fingerprint stored for digest in scope: HMAC-SHA-256 under
// the deployment's fingerprint key of the scope and the digest, so equal
// inputs of two API keys are not linked either.
func (s *Store) keyed(ctx context.Context, scope, digest string) (string, error) {
	if s.sealer == nil {
		return digest, nil
	}
	secret, err := s.fingerprintSecret(ctx)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, secret)
	writePart(m, []byte(scope))
	writePart(m, []byte(digest))
	return hex.EncodeToString(m.Sum(nil)), nil
}

// fingerprintSecret returns the key: cached, else read and opened, else
// created. Two processes creating it at once both try a conditional put;
// the loser reads the winner's.
func (s *Store) fingerprintSecret(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	secret := s.secret
	s.mu.Unlock()
	if secret != nil {
		return secret, nil
	}
	secret, err := s.readSecret(ctx)
	if errors.Is(err, store.ErrNotFound) {
		secret, err = s.createSecret(ctx)
		if errors.Is(err, store.ErrConditionFailed) {
			secret, err = s.readSecret(ctx)
		}
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.secret = secret
	s.mu.Unlock()
	return secret, nil
}

func (s *Store) readSecret(ctx context.Context) ([]byte, error) {
	it, err := s.st.Get(ctx, fingerprintKey)
	if err != nil {
		return nil, err
	}
	secret, err := s.sealer.Open(ctx, it.Bytes("sealed"), fingerprintBinding)
	if err != nil {
		return nil, fmt.Errorf("idempotency: open the fingerprint key: %w", err)
	}
	return secret, nil
}

func (s *Store) createSecret(ctx context.Context) ([]byte, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("idempotency: random: %w", err)
	}
	sealed, err := s.sealer.Seal(ctx, secret, fingerprintBinding)
	if err != nil {
		return nil, fmt.Errorf("idempotency: seal the fingerprint key: %w", err)
	}
	it := store.NewItem(fingerprintKey)
	it["sealed"] = sealed
	if err := s.st.Put(ctx, it, store.NotExists()); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, err
		}
		return nil, fmt.Errorf("idempotency: store the fingerprint key: %w", err)
	}
	return secret, nil
}

func itemKey(scope, key string) store.Key {
	return store.Key{PK: "idem#" + scope + "#" + key, SK: "idem"}
}

// Claim takes the key for this request, or returns the stored response to
// replay, ErrReused, or *InProgressError. scope is the API key's id, so
// sibling keys never see each other's responses; digest is the request's
// Fingerprint. A record stored before fingerprints were keyed holds the
// plain digest: it never matches, so a retry across that change is
// ErrReused — refused, never run twice nor answered another's response.
func (s *Store) Claim(ctx context.Context, scope, key, digest string) (*Claim, *Response, error) {
	fingerprint, err := s.keyed(ctx, scope, digest)
	if err != nil {
		return nil, nil, err
	}
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
