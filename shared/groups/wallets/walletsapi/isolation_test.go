package walletsapi_test

import (
	"testing"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// Another account's wallet, and a wallet of another project (or of a
// project, seen from account level), is 404 on every wallet route, with or
// without a valid quote id of that wallet; a list holds only the caller's
// scope.
func TestAnotherAccountsOrProjectsWalletIsNotFoundOnEveryRoute(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		stranger, _ := e.RootKey(10, nil)
		prjA := map[string]string{"X-Service-Project": e.Must(post(e, root, "/projects", map[string]any{"name": "a"}, nil), 201).Str("id")}
		prjB := map[string]string{"X-Service-Project": e.Must(post(e, root, "/projects", map[string]any{"name": "b"}, nil), 201).Str("id")}

		acctWallet, acctAddr := newWallet(t, e, root, nil)
		prjWallet, _ := newWallet(t, e, root, prjA)
		fund(t, dev, acctAddr, map[string]int64{"ETH": 1e17})
		// Quotes of the owner's, so the routes that take one are asked
		// about a real one.
		tq := e.Must(txQuote(e, root, acctWallet, freshAddress(), "ETH", "1000"), 201).Str("id")
		sq := e.Must(post(e, root, "/wallets/"+acctWallet+"/signatures/quote", map[string]any{"type": "personal_sign", "message": "hi"}, nil), 201).Str("id")
		tx := e.Must(send(e, root, acctWallet, e.Must(txQuote(e, root, acctWallet, freshAddress(), "ETH", "1000"), 201).Str("id")), 202).Str("id")
		waitTx(t, e, root, acctWallet, tx)

		routes := func(w string) []apitest.Req {
			return []apitest.Req{
				{Method: "GET", Path: "/v1/wallets/" + w},
				{Method: "GET", Path: "/v1/wallets/" + w + "/balances"},
				{Method: "PATCH", Path: "/v1/wallets/" + w + "/policy", Idem: "x", Body: map[string]any{"expectedRevision": 1, "defaultAction": "deny", "rules": []any{}}},
				{Method: "POST", Path: "/v1/wallets/" + w + "/transactions/quote", Idem: "x", Body: map[string]any{"chainId": 1337, "to": freshAddress().Hex(), "asset": "ETH", "amount": "1"}},
				{Method: "POST", Path: "/v1/wallets/" + w + "/transactions", Idem: "x", Body: map[string]any{"quoteId": tq}},
				{Method: "GET", Path: "/v1/wallets/" + w + "/transactions"},
				{Method: "GET", Path: "/v1/wallets/" + w + "/transactions/" + tx},
				{Method: "POST", Path: "/v1/wallets/" + w + "/signatures/quote", Idem: "x", Body: map[string]any{"type": "personal_sign", "message": "hi"}},
				{Method: "POST", Path: "/v1/wallets/" + w + "/signatures", Idem: "x", Body: map[string]any{"quoteId": sq}},
			}
		}
		for _, c := range []struct {
			name    string
			key     string
			headers map[string]string
			wallet  string
		}{
			{"another account, the account's wallet", stranger, nil, acctWallet},
			{"another account, a project's wallet", stranger, nil, prjWallet},
			{"another project, the account's wallet", root, prjB, acctWallet},
			{"another project, a project's wallet", root, prjB, prjWallet},
			{"account level, a project's wallet", root, nil, prjWallet},
			{"a project, the account-level wallet", root, prjA, acctWallet},
		} {
			for _, r := range routes(c.wallet) {
				r.Key, r.Headers = c.key, c.headers
				if r.Idem != "" {
					r.Idem = apitest.Idem()
				}
				if got := e.Do(r); got.Status != 404 || got.Code() != "not_found" {
					t.Errorf("%s: %s %s: %d %s", c.name, r.Method, r.Path, got.Status, got.Raw)
				}
			}
		}
		// Nothing the strangers tried changed the wallet.
		if w := e.Must(get(e, root, "/wallets/"+acctWallet, nil), 200); w.Body["policy"].(map[string]any)["revision"] != 1.0 {
			t.Fatalf("policy changed: %s", w.Raw)
		}
		if n := txCount(t, e, root, acctWallet); n != 1 {
			t.Fatalf("%d transactions", n)
		}

		lists := []struct {
			name    string
			key     string
			headers map[string]string
			want    []string
		}{
			{"the account level", root, nil, []string{acctWallet}},
			{"project a", root, prjA, []string{prjWallet}},
			{"project b", root, prjB, nil},
			{"another account", stranger, nil, nil},
		}
		for _, c := range lists {
			var got []string
			for _, w := range e.Must(get(e, c.key, "/wallets", c.headers), 200).Body["data"].([]any) {
				got = append(got, str(w, "id"))
			}
			if len(got) != len(c.want) || len(got) == 1 && got[0] != c.want[0] {
				t.Errorf("%s lists %v, want %v", c.name, got, c.want)
			}
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}
