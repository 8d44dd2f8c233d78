package soak

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Request is one request of the model, sent again with the same
// Idempotency-Key until it has a final answer.
type Request struct {
	Op, Method, Path string
	Key              *Key // nil: no Authorization (a credit token redemption)
	Secret           string
	Idem             string
	Body             []byte
	Header           map[string]string
	Requester        string // an approval decision: the key that asked for it
	Payment          string // the x402 authorization's nonce a top-up carries
	// Harness is a call of the harness itself, sent while the server is
	// withheld from the workers.
	Harness bool
}

// Answer is a final answer, or the last one before the client gave up.
type Answer struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Client sends the model's requests to the current life of the server and
// records every attempt, answered or not.
type Client struct {
	Server  *Server
	Timeout time.Duration // the server's request timeout
	// GiveUp is how long a request is retried through kills and
	// refusals to come back before the client stops asking.
	GiveUp time.Duration

	http    *http.Client
	mu      sync.Mutex
	history []Record
}

func NewClient(s *Server, timeout time.Duration) *Client {
	return &Client{Server: s, Timeout: timeout, GiveUp: 2 * time.Minute,
		http: &http.Client{Timeout: timeout + 30*time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// History is every attempt so far.
func (c *Client) History() []Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Record(nil), c.history...)
}

// Do sends r until it has a final answer: an attempt with no answer (the
// server died), a 503, a 429 and an idempotency claim still held by a dead
// attempt are asked again with the same Idempotency-Key.
func (c *Client) Do(r Request) Answer {
	var last Answer
	until := time.Now().Add(c.GiveUp)
	for wait := 100 * time.Millisecond; time.Now().Before(until); wait = min(2*wait, 2*time.Second) {
		a, ok := c.once(r)
		if ok {
			last = a
			retry := a.Status == 503 || a.Status == 429 ||
				(a.Status == 409 && a.Body["code"] == "idempotency_request_in_progress")
			if !retry {
				return a
			}
			if s, err := strconv.Atoi(a.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = min(time.Duration(s)*time.Second, 5*time.Second)
			}
		}
		time.Sleep(wait)
	}
	return last
}

// once is one attempt, recorded.
func (c *Client) once(r Request) (Answer, bool) {
	base := c.Server.Base()
	if r.Harness {
		base = c.Server.URL()
	}
	rec := Record{Op: r.Op, Method: r.Method, Path: r.Path, Idem: r.Idem, Sent: time.Now(), Timeout: c.Timeout, Requester: r.Requester, Payment: r.Payment}
	if r.Key != nil {
		rec.KeyID = r.Key.ID
	}
	defer func() {
		c.mu.Lock()
		c.history = append(c.history, rec)
		c.mu.Unlock()
	}()
	if base == "" {
		rec.Answered = time.Now()
		return Answer{}, false
	}
	req, err := http.NewRequest(r.Method, base+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		return Answer{}, false
	}
	if r.Secret != "" {
		req.Header.Set("Authorization", "Bearer "+r.Secret)
	}
	if r.Idem != "" {
		req.Header.Set("Idempotency-Key", r.Idem)
	}
	if len(r.Body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		rec.Answered = time.Now()
		return Answer{}, false
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	rec.Answered = time.Now()
	if err != nil {
		// A body cut short by a kill: the status came, the answer did not.
		return Answer{}, false
	}
	a := Answer{Status: res.StatusCode, Header: res.Header, Raw: raw}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&a.Body)
	rec.Status, rec.RequestID = a.Status, res.Header.Get("X-Request-Id")
	rec.Code, _ = a.Body["code"].(string)
	rec.Unchanged = saysUnchanged(a)
	if a.Status/100 == 2 {
		rec.Made = made(a)
	}
	return a, true
}

// made is what a successful answer names: a top-up's receipt, else the id
// of the resource it answers with.
func made(a Answer) string {
	if v := a.Header.Get("X-Service-Paid-Agent-Receipt"); v != "" {
		return v
	}
	id, _ := a.Body["id"].(string)
	return id
}

// saysUnchanged is an answer that tells the client its request was
// refused: validation, authorisation, a lost race, a short balance.
// Retryable answers (503, 429, a claim in progress) promise nothing.
func saysUnchanged(a Answer) bool {
	if a.Status < 400 || a.Status >= 500 || a.Status == 429 {
		return false
	}
	return a.Status != 409 || a.Body["code"] != "idempotency_request_in_progress"
}
