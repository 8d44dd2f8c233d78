package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
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

// sendAndConfirm quotes and executes a send of 1 USDC base unit from the
// wallet and waits until the API reports it confirmed; it returns the
// transaction's hash.
func sendAndConfirm(t *testing.T, base string, auth map[string]string, walletID, idem string) common.Hash {
	t.Helper()
	headers := map[string]string{"Authorization": auth["Authorization"], "Content-Type": "application/json"}
	headers["Idempotency-Key"] = idem + "-quote"
	code, q := call(t, "POST", base+"/v1/wallets/"+walletID+"/transactions/quote", headers,
		`{"chainId":1337,"to":"0x00000000000000000000000000000000000c0ffe","asset":"USDC","amount":"1"}`)
	if code != 200 && code != 201 {
		t.Fatalf("quote: %d %v", code, q)
	}
	headers["Idempotency-Key"] = idem
	code, tx := call(t, "POST", base+"/v1/wallets/"+walletID+"/transactions", headers, fmt.Sprintf(`{"quoteId":%q}`, q["id"]))
	if code/100 != 2 {
		t.Fatalf("send: %d %v", code, tx)
	}
	deadline := time.Now().Add(30 * time.Second)
	for tx["status"] != "confirmed" {
		if time.Now().After(deadline) {
			t.Fatalf("never confirmed: %v", tx)
		}
		time.Sleep(50 * time.Millisecond)
		if code, tx = call(t, "GET", base+"/v1/wallets/"+walletID+"/transactions/"+tx["id"].(string), auth, ""); code != 200 {
			t.Fatalf("read: %d %v", code, tx)
		}
	}
	return common.HexToHash(tx["hash"].(string))
}

// Every send the API reported confirmed is still on the local chain after
// the server is killed with SIGKILL right after the confirmations, and
// the wallet sends on from there.
func TestEveryConfirmedSendSurvivesAKill9OfTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real server twice")
	}
	dir := t.TempDir()
	env := []string{"DATA_DIR=" + dir}
	first := start(t, env)
	code, key := call(t, "POST", first.base+"/v1/api-keys", map[string]string{
		"X-Service-Credit-Token": mintToken(t, env), "Idempotency-Key": "kill-root", "Content-Type": "application/json"}, `{"label":"root"}`)
	if code != 201 {
		t.Fatalf("create key: %d %v", code, key)
	}
	auth := map[string]string{"Authorization": "Bearer " + key["secret"].(string)}
	code, w := call(t, "POST", first.base+"/v1/wallets", map[string]string{"Authorization": auth["Authorization"],
		"Idempotency-Key": "kill-wallet", "Content-Type": "application/json"}, `{}`)
	if code != 201 {
		t.Fatalf("create wallet: %d %v", code, w)
	}
	id, addr := w["id"].(string), w["address"].(string)
	for asset, amount := range map[string]string{"ETH": "1", "USDC": "10"} {
		if out, err := fundCmd(t, env, "--address", addr, "--asset", asset, "--amount", amount); err != nil {
			t.Fatalf("fund %s: %v %s", asset, err, out)
		}
	}
	const sends = 8
	var confirmed []common.Hash
	for i := range sends {
		confirmed = append(confirmed, sendAndConfirm(t, first.base, auth, id, fmt.Sprintf("kill-send-%d", i)))
	}
	_ = first.cmd.Process.Kill()
	_ = first.cmd.Wait()

	again := start(t, env)
	defer again.stop(t)
	raw, err := os.ReadFile(filepath.Join(dir, "chain", "endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	rpc, err := ethclient.Dial(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	kept := 0
	for _, h := range confirmed {
		if r, err := rpc.TransactionReceipt(context.Background(), h); err == nil && r.Status == 1 {
			kept++
		}
	}
	t.Logf("%d of %d sends confirmed before kill -9 have a receipt after the restart", kept, sends)
	if kept != sends {
		t.Fatalf("%d of %d confirmed sends lost with the kill", sends-kept, sends)
	}
	sendAndConfirm(t, again.base, auth, id, "kill-send-after")
}
