// Package chainstate asks an EVM chain, over JSON-RPC, whether an EIP-3009
// authorization has been used: the token contract's
// authorizationState(authorizer, nonce). It is how a settlement whose
// answer was lost is reconciled: the chain, not the facilitator, says
// whether the transfer happened.
package chainstate

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// selector is the first four bytes of keccak256("authorizationState(address,bytes32)").
const selector = "e94a0102"

// Client reads authorization states from one chain's JSON-RPC endpoint.
type Client struct {
	url  string
	http *http.Client
}

// New reads from the JSON-RPC endpoint at url.
func New(url string) *Client {
	return &Client{url: url, http: &http.Client{Timeout: 10 * time.Second}}
}

// AuthorizationUsed reports whether from's authorization with nonce has
// been used (or cancelled) on the token contract asset, at the latest block.
func (c *Client) AuthorizationUsed(ctx context.Context, asset, from, nonce string) (bool, error) {
	addr, err := word(from, 20)
	if err != nil {
		return false, fmt.Errorf("chainstate: authorizer: %w", err)
	}
	n, err := word(nonce, 32)
	if err != nil {
		return false, fmt.Errorf("chainstate: nonce: %w", err)
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "eth_call",
		"params": []any{map[string]string{"to": asset, "data": "0x" + selector + addr + n}, "latest"},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return false, fmt.Errorf("chainstate: eth_call: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil || resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("chainstate: eth_call: status %d", resp.StatusCode)
	}
	var out struct {
		Result string `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return false, fmt.Errorf("chainstate: eth_call answer: %w", err)
	}
	if out.Error != nil {
		return false, fmt.Errorf("chainstate: eth_call: %s", out.Error.Message)
	}
	result, err := hex.DecodeString(strings.TrimPrefix(out.Result, "0x"))
	if err != nil || len(result) != 32 {
		return false, errors.New("chainstate: eth_call answered something other than one bool word")
	}
	return result[31] == 1, nil
}

// word is a hex value left-padded to one 32-byte ABI word.
func word(hexValue string, size int) (string, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(hexValue, "0x"), "0X"))
	if err != nil || len(b) != size {
		return "", fmt.Errorf("want %d bytes of hex", size)
	}
	return strings.Repeat("00", 32-size) + hex.EncodeToString(b), nil
}
