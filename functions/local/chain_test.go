package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func fundCmd(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"fund"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// walletBalances reads a wallet's balances by symbol.
func walletBalances(t *testing.T, base string, auth map[string]string, walletID string) map[string]string {
	t.Helper()
	code, body := call(t, "GET", base+"/v1/wallets/"+walletID+"/balances", auth, "")
	if code != 200 {
		t.Fatalf("balances: %d %v", code, body)
	}
	out := map[string]string{}
	for _, b := range body["data"].([]any) {
		m := b.(map[string]any)
		out[m["symbol"].(string)] = m["amount"].(string)
	}
	return out
}

// `local fund` reaches the chain of a running server (through its JSON-RPC
// endpoint) and a stopped one (opening it itself), and the chain keeps what
// it was given across a restart.
func TestFundReachesTheLocalChainRunningOrNotAndItSurvivesARestart(t *testing.T) {
	env := []string{"DATA_DIR=" + t.TempDir()}
	srv := start(t, env)
	code, key := call(t, "POST", srv.base+"/v1/api-keys", map[string]string{
		"X-Service-Credit-Token": mintToken(t, env), "Idempotency-Key": "first-key-001", "Content-Type": "application/json"}, `{"label":"root"}`)
	if code != 201 {
		t.Fatalf("create key: %d %v", code, key)
	}
	auth := map[string]string{"Authorization": "Bearer " + key["secret"].(string)}
	code, w := call(t, "POST", srv.base+"/v1/wallets", map[string]string{"Authorization": auth["Authorization"],
		"Idempotency-Key": "wallet-0001", "Content-Type": "application/json"}, `{}`)
	if code != 201 {
		t.Fatalf("create wallet: %d %v", code, w)
	}
	id, addr := w["id"].(string), w["address"].(string)
	if out, err := fundCmd(t, env, "--address", addr, "--asset", "USDC", "--amount", "2.5"); err != nil || !strings.Contains(out, "2500000 base units") {
		t.Fatalf("fund while running: %v %s", err, out)
	}
	if b := walletBalances(t, srv.base, auth, id); b["USDC"] != "2500000" {
		t.Fatalf("after funding: %v", b)
	}
	for _, bad := range [][]string{{"--address", addr, "--asset", "DOGE", "--amount", "1"}, {"--address", "0x12", "--asset", "ETH", "--amount", "1"},
		{"--address", addr, "--asset", "USDC", "--amount", "0.0000001"}, {"--address", addr, "--asset", "ETH", "--amount", "-1"}} {
		if out, err := fundCmd(t, env, bad...); err == nil {
			t.Fatalf("fund %v succeeded: %s", bad, out)
		}
	}
	srv.stop(t)
	if out, err := fundCmd(t, env, "--address", addr, "--asset", "ETH", "--amount", "1"); err != nil {
		t.Fatalf("fund while stopped: %v %s", err, out)
	}
	again := start(t, env)
	defer again.stop(t)
	if b := walletBalances(t, again.base, auth, id); b["USDC"] != "2500000" || b["ETH"] != "1000000000000000000" {
		t.Fatalf("after a restart: %v", b)
	}
}
