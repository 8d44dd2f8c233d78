package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys"
)

// The measured requests, as a client sends them.
const (
	balancePath  = "/v1/credits/balance"
	projectsPath = "/v1/projects"
	// noopPath is the bench's own handler beside the API, outside it.
	noopPath = "/bench/noop"
)

// apiClient drives the API in process, without a socket: the setup of the
// measured key, and the requests whose storage round trips are counted,
// which must then be the only traffic the counters see.
type apiClient struct{ h http.Handler }

// do sends one request and returns the status and body.
func (c apiClient) do(method, path string, header map[string]string, body any) (int, []byte, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes(), nil
}

// expect sends a request and fails unless the answer has the wanted status.
func (c apiClient) expect(want int, method, path string, header map[string]string, body any) ([]byte, error) {
	status, out, err := c.do(method, path, header, body)
	if err != nil {
		return nil, err
	}
	if status != want {
		return nil, fmt.Errorf("%s %s: %d %s, want %d", method, path, status, out, want)
	}
	return out, nil
}

// leafKey creates an account from a credit token and a key at depth 3 under
// its root, and returns that key's secret. The measured key sits at depth 3
// so that authentication reads a real chain, and it carries one "*" limit
// so that every request it makes, read or write, moves one limit counter,
// as a production key with a rate limit does.
func leafKey(c apiClient, signer *credittoken.Signer) (string, error) {
	chain, _, err := keyChain(c, signer)
	if err != nil {
		return "", err
	}
	return chain[len(chain)-1], nil
}

// keyChain is leafKey's account: the secrets of the root, its child and the
// leaf, and the account's id.
func keyChain(c apiClient, signer *credittoken.Signer) (secrets []string, accountID string, err error) {
	tok, err := signer.Mint(1000*catalog.MicroPerCredit, time.Now(), time.Hour)
	if err != nil {
		return nil, "", err
	}
	secret := ""
	steps := []struct {
		idem string
		body map[string]any
	}{
		{"bench-root-0001", map[string]any{"label": "bench root"}},
		{"bench-child-0001", map[string]any{"label": "bench child"}},
		{"bench-leaf-0001", map[string]any{"label": "bench leaf", "limits": map[string]any{
			"*": map[string]any{"requestsPerMinute": 100_000_000},
		}}},
	}
	for i, st := range steps {
		header := map[string]string{"Idempotency-Key": st.idem}
		if i == 0 {
			header["X-Service-Credit-Token"] = tok
		} else {
			header["Authorization"] = "Bearer " + secret
		}
		out, err := c.expect(http.StatusCreated, http.MethodPost, "/v1/api-keys", header, st.body)
		if err != nil {
			return nil, "", err
		}
		var k struct {
			Secret string `json:"secret"`
			Depth  int    `json:"depth"`
		}
		if err := json.Unmarshal(out, &k); err != nil || k.Secret == "" || k.Depth != i+1 {
			return nil, "", fmt.Errorf("create key at depth %d: unexpected answer %s", i+1, out)
		}
		secret = k.Secret
		secrets = append(secrets, secret)
	}
	h, ok := keys.ParseSecret(secret)
	if !ok {
		return nil, "", fmt.Errorf("create key: a secret that names no account")
	}
	return secrets, h.AccountID, nil
}
