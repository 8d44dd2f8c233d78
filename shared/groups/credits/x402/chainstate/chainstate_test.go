package chainstate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"platformapi/shared/groups/credits/x402/chainstate"
)

const (
	asset = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	from  = "0x1111111111111111111111111111111111111111"
	nonce = "0x2222222222222222222222222222222222222222222222222222222222222222"
)

// fakeRPC answers eth_call for authorizationState(from, nonce) on asset as
// a node would, after checking the call is exactly that.
func fakeRPC(t *testing.T, used string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		var call map[string]string
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "eth_call" || len(req.Params) != 2 || json.Unmarshal(req.Params[0], &call) != nil {
			t.Errorf("request %+v %v", req, err)
		}
		want := "0xe94a0102" + strings.Repeat("0", 24) + strings.TrimPrefix(from, "0x") + strings.TrimPrefix(nonce, "0x")
		if call["to"] != asset || call["data"] != want || string(req.Params[1]) != `"latest"` {
			t.Errorf("call %v, want data %s to %s", call, want, asset)
		}
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"0x` + strings.Repeat("0", 63) + used + `"}`))
	}))
}

func TestTheChainSaysWhetherAnAuthorizationWasUsed(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   bool
	}{{"1", true}, {"0", false}} {
		srv := fakeRPC(t, tc.answer)
		got, err := chainstate.New(srv.URL).AuthorizationUsed(context.Background(), asset, from, nonce)
		srv.Close()
		if err != nil || got != tc.want {
			t.Fatalf("answer %s: used %v %v, want %v", tc.answer, got, err, tc.want)
		}
	}
}

func TestAMalformedAuthorizationOrAnswerIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"execution reverted"}}`))
	}))
	defer srv.Close()
	c := chainstate.New(srv.URL)
	if _, err := c.AuthorizationUsed(context.Background(), asset, from, nonce); err == nil {
		t.Fatal("a JSON-RPC error was taken for an answer")
	}
	if _, err := c.AuthorizationUsed(context.Background(), asset, "0x12", nonce); err == nil {
		t.Fatal("a short address was accepted")
	}
}
