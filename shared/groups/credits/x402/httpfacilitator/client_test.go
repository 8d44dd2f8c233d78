package httpfacilitator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/groups/credits/x402"
	"platformapi/shared/groups/credits/x402/localfacilitator"
)

func testRequirements() x402.PaymentRequirements {
	return x402.PaymentRequirements{
		Scheme:            x402.SchemeExact,
		Network:           "eip155:84532",
		Amount:            x402.USDCFromCents(500),
		Asset:             "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		PayTo:             "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MaxTimeoutSeconds: 300,
		Extra:             x402.Extra{Name: "USDC", Version: "2"},
	}
}

func signed(t *testing.T) x402.PaymentPayload {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	p, err := x402.Sign(key, testRequirements(), x402.SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// facilitatorServer is an httptest x402 facilitator backed by the local
// facilitator; it insists on the request shape and the bearer key.
func facilitatorServer(t *testing.T) *httptest.Server {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	local := localfacilitator.New(st, localfacilitator.Config{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var body struct {
			X402Version         int                       `json:"x402Version"`
			PaymentPayload      *x402.PaymentPayload      `json:"paymentPayload"`
			PaymentRequirements *x402.PaymentRequirements `json:"paymentRequirements"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.X402Version != 2 ||
			body.PaymentPayload == nil || body.PaymentPayload.X402Version != 2 || body.PaymentRequirements == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var answer any
		switch r.URL.Path {
		case "/facilitator/verify":
			answer, err = local.Verify(r.Context(), *body.PaymentPayload, *body.PaymentRequirements)
		case "/facilitator/settle":
			answer, err = local.Settle(r.Context(), *body.PaymentPayload, *body.PaymentRequirements)
		default:
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClient_VerifiesAndSettlesOnceAgainstFacilitator(t *testing.T) {
	ctx, req := context.Background(), testRequirements()
	c := newClient(t, Config{BaseURL: facilitatorServer(t).URL + "/facilitator/", APIKey: "secret"})
	p := signed(t)

	if v, err := c.Verify(ctx, p, req); err != nil || !v.IsValid || v.Payer != p.Payload.Authorization.From {
		t.Fatalf("verify: %+v, %v", v, err)
	}
	if s, err := c.Settle(ctx, p, req); err != nil || !s.Success || !strings.HasPrefix(s.Transaction, localfacilitator.TransactionPrefix) {
		t.Fatalf("settle: %+v, %v", s, err)
	}
	if s, err := c.Settle(ctx, p, req); err != nil || s.Success || s.ErrorReason != x402.ReasonNonceUsed {
		t.Fatalf("second settle: %+v, %v", s, err)
	}
	// A legacy v1 payload is sent upgraded to v2 (the server refuses v1).
	v1 := signed(t)
	v1.X402Version, v1.Accepted = 1, x402.PaymentRequirements{Scheme: x402.SchemeExact, Network: req.Network}
	if s, err := c.Settle(ctx, v1, req); err != nil || !s.Success {
		t.Fatalf("v1 settle: %+v, %v", s, err)
	}
}

func TestClient_WrongKeyIsAnError(t *testing.T) {
	c := newClient(t, Config{BaseURL: facilitatorServer(t).URL + "/facilitator", APIKey: "wrong"})
	_, err := c.Verify(context.Background(), signed(t), testRequirements())
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized {
		t.Fatalf("err %v, want 401 StatusError", err)
	}
}

// Each kind of answer maps to a decision or to an error, never to a
// success that was not clearly stated.
func TestClient_AnswerMapping(t *testing.T) {
	const network = `"network":"eip155:84532"`
	tests := []struct {
		name    string
		op      string
		status  int
		body    string
		reason  string // expected rejection reason; "" with ok means success
		ok      bool
		errKind error // ErrBadAnswer, or errStatus for a *StatusError
	}{
		{"verify valid", "verify", 200, `{"isValid":true,"payer":"0xabc"}`, "", true, nil},
		{"verify rejection", "verify", 200, `{"isValid":false,"invalidReason":"insufficient_funds"}`, "insufficient_funds", false, nil},
		{"verify rejection without reason", "verify", 200, `{"isValid":false}`, x402.ReasonVerifyFailed, false, nil},
		{"verify rejection with 400", "verify", 400, `{"isValid":false,"invalidReason":"invalid_payload"}`, "invalid_payload", false, nil},
		{"verify 400 without decision", "verify", 400, `{"error":"bad request"}`, "", false, errStatus},
		{"verify 400 claiming valid", "verify", 400, `{"isValid":true}`, "", false, errStatus},
		{"verify 500 with reason", "verify", 500, `{"isValid":false,"invalidReason":"unexpected_verify_error"}`, "", false, errStatus},
		{"verify 429", "verify", 429, ``, "", false, errStatus},
		{"verify redirect not followed", "verify", 307, ``, "", false, errStatus},
		{"verify not JSON", "verify", 200, `<html>`, "", false, ErrBadAnswer},
		{"verify missing isValid", "verify", 200, `{"payer":"0xabc"}`, "", false, ErrBadAnswer},
		{"verify trailing data", "verify", 200, `{"isValid":true} {}`, "", false, ErrBadAnswer},
		{"verify oversized", "verify", 200, `{"isValid":true,"pad":"` + strings.Repeat("x", 2000) + `"}`, "", false, ErrBadAnswer},
		{"settle success", "settle", 200, `{"success":true,"transaction":"0x01",` + network + `}`, "", true, nil},
		{"settle rejection", "settle", 200, `{"success":false,"errorReason":"insufficient_funds","transaction":"",` + network + `}`, "insufficient_funds", false, nil},
		{"settle rejection without reason", "settle", 200, `{"success":false,"transaction":""}`, x402.ReasonSettleFailed, false, nil},
		{"settle success without transaction", "settle", 200, `{"success":true,"transaction":"",` + network + `}`, "", false, ErrBadAnswer},
		{"settle success on other network", "settle", 200, `{"success":true,"transaction":"0x01","network":"eip155:8453"}`, "", false, ErrBadAnswer},
		{"settle missing success", "settle", 200, `{"transaction":"0x01"}`, "", false, ErrBadAnswer},
		{"settle 503", "settle", 503, `{"success":false,"errorReason":"x"}`, "", false, errStatus},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var redirected atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					redirected.Store(true)
				}
				if tc.status == 307 {
					http.Redirect(w, r, "/elsewhere", tc.status)
					return
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := newClient(t, Config{BaseURL: srv.URL, MaxResponseBytes: 1024})
			ok, reason, err := call(c, tc.op)

			switch {
			case tc.errKind == errStatus:
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != tc.status {
					t.Fatalf("err %v, want StatusError %d", err, tc.status)
				}
			case tc.errKind != nil:
				if !errors.Is(err, tc.errKind) {
					t.Fatalf("err %v, want %v", err, tc.errKind)
				}
			case err != nil || ok != tc.ok || reason != tc.reason:
				t.Fatalf("got ok=%v reason=%q err=%v", ok, reason, err)
			}
			if redirected.Load() {
				t.Fatal("redirect was followed")
			}
		})
	}
}

var errStatus = errors.New("status error")

func call(c *Client, op string) (ok bool, reason string, err error) {
	ctx, req := context.Background(), testRequirements()
	p := x402.PaymentPayload{X402Version: 2, Accepted: req}
	if op == "verify" {
		v, err := c.Verify(ctx, p, req)
		return v.IsValid, v.InvalidReason, err
	}
	s, err := c.Settle(ctx, p, req)
	return s.Success, s.ErrorReason, err
}

func TestClient_TimeoutIsAnError(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release) // runs first: lets the handler return so Close does not wait
	c := newClient(t, Config{BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
	_, err := c.Settle(context.Background(), signed(t), testRequirements())
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err %v, want a timeout", err)
	}
}

func TestClient_APIKeyHeader(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		io.WriteString(w, `{"isValid":true}`)
	}))
	defer srv.Close()
	c := newClient(t, Config{BaseURL: srv.URL, APIKey: "k1", APIKeyHeader: "X-Api-Key"})
	if _, err := c.Verify(context.Background(), signed(t), testRequirements()); err != nil {
		t.Fatal(err)
	}
	if got.Get("X-Api-Key") != "k1" || got.Get("Authorization") != "" {
		t.Fatalf("headers %v", got)
	}
}

func TestClient_InvalidRequirementsIsAnError(t *testing.T) {
	c := newClient(t, Config{BaseURL: "http://127.0.0.1:1"})
	req := testRequirements()
	req.Asset = "USDC"
	if _, err := c.Verify(context.Background(), signed(t), req); !errors.Is(err, x402.ErrInvalidRequirements) {
		t.Fatalf("err %v", err)
	}
}

func TestNew_BaseURLRules(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://x402.org/facilitator":   true,
		"http://127.0.0.1:4021":          true,
		"http://localhost:4021/f":        true,
		"http://[::1]:4021":              true,
		"http://facilitator.example.com": false,
		"ftp://127.0.0.1":                false,
		"https://x402.org/f?key=1":       false,
		"https://user:pw@x402.org/f":     false,
		"/relative":                      false,
		"":                               false,
	} {
		if _, err := New(Config{BaseURL: url}); (err == nil) != ok {
			t.Errorf("New(%q): err %v, want ok=%v", url, err, ok)
		}
	}
}
