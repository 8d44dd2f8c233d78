// Package httpfacilitator is the x402.Facilitator adapter for a remote x402
// facilitator: it POSTs {x402Version, paymentPayload, paymentRequirements}
// to <BaseURL>/verify and <BaseURL>/settle, the facilitator API of the x402
// v2 specification, and maps the answers onto the port's contract: a
// decision about the payment comes back as a response, anything else
// (transport failure, timeout, unexpected status, malformed or oversized
// answer) as an error, so the caller never credits on a doubtful answer.
package httpfacilitator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"platformapi/shared/base/outbound"
	"platformapi/shared/groups/credits/x402"
)

// Defaults for Config.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxResponseBytes = 64 << 10
)

// Config selects and authenticates the remote facilitator.
type Config struct {
	// BaseURL is the facilitator root, e.g. "https://x402.org/facilitator".
	// It must be https; plain http is allowed only to a loopback host, so
	// the API key never crosses a network in clear text.
	BaseURL string
	// APIKey, when set, is sent on every request: as "Authorization: Bearer
	// <APIKey>", or raw in APIKeyHeader when that is set (e.g. "X-Api-Key").
	APIKey       string
	APIKeyHeader string
	// Timeout bounds each request including reading the answer.
	Timeout time.Duration
	// MaxResponseBytes bounds an answer; a longer one is an error.
	MaxResponseBytes int64
}

// Client is a remote x402.Facilitator. It is safe for concurrent use.
type Client struct {
	base     string
	header   string
	value    string
	maxBytes int64
	http     *http.Client
}

var _ x402.Facilitator = (*Client)(nil)

// New validates cfg and returns a client.
func New(cfg Config) (*Client, error) {
	base, err := outbound.BaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("httpfacilitator: %w", err)
	}
	c := &Client{base: base, maxBytes: cfg.MaxResponseBytes}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxResponseBytes
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if cfg.APIKey != "" {
		c.header, c.value = "Authorization", "Bearer "+cfg.APIKey
		if cfg.APIKeyHeader != "" {
			c.header, c.value = cfg.APIKeyHeader, cfg.APIKey
		}
	}
	c.http = outbound.Client(timeout)
	return c, nil
}

// request is the body of /verify and /settle.
type request struct {
	X402Version         int                      `json:"x402Version"`
	PaymentPayload      x402.PaymentPayload      `json:"paymentPayload"`
	PaymentRequirements x402.PaymentRequirements `json:"paymentRequirements"`
}

// Verify asks the facilitator whether the payment is valid.
func (c *Client) Verify(ctx context.Context, p x402.PaymentPayload, req x402.PaymentRequirements) (x402.VerifyResponse, error) {
	status, body, err := c.post(ctx, "verify", p, req)
	if err != nil {
		return x402.VerifyResponse{}, err
	}
	return verifyAnswer(status, body)
}

// Settle asks the facilitator to execute the payment.
func (c *Client) Settle(ctx context.Context, p x402.PaymentPayload, req x402.PaymentRequirements) (x402.SettleResponse, error) {
	status, body, err := c.post(ctx, "settle", p, req)
	if err != nil {
		return x402.SettleResponse{}, err
	}
	return settleAnswer(status, body, req.Network)
}

// post sends one facilitator call and returns the status and bounded body.
// Requirements are validated first so a misconfiguration is reported as
// x402.ErrInvalidRequirements, as by every adapter.
func (c *Client) post(ctx context.Context, op string, p x402.PaymentPayload, req x402.PaymentRequirements) (int, []byte, error) {
	if _, err := req.Terms(); err != nil {
		return 0, nil, err
	}
	body, err := json.Marshal(request{X402Version: x402.Version, PaymentPayload: p.Upgrade(req), PaymentRequirements: req})
	if err != nil {
		return 0, nil, fmt.Errorf("httpfacilitator: %s: encode: %w", op, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+op, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("httpfacilitator: %s: %w", op, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.header != "" {
		hreq.Header.Set(c.header, c.value)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return 0, nil, fmt.Errorf("httpfacilitator: %s: %w", op, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return 0, nil, fmt.Errorf("httpfacilitator: %s: read answer: %w", op, err)
	}
	if int64(len(answer)) > c.maxBytes {
		return 0, nil, fmt.Errorf("%w: %s answer exceeds %d bytes", ErrBadAnswer, op, c.maxBytes)
	}
	if resp.StatusCode/100 != 2 && !isDecisionStatus(resp.StatusCode) {
		return 0, nil, &StatusError{Op: op, StatusCode: resp.StatusCode}
	}
	return resp.StatusCode, answer, nil
}

// ErrBadAnswer reports an answer that is not a well-formed facilitator
// response; no decision can be read from it.
var ErrBadAnswer = errors.New("httpfacilitator: malformed facilitator answer")
