package devchain_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"platformapi/shared/base/chain"
	"platformapi/shared/base/chain/devchain"
)

func TestTheChainAndItsContractsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dev, err := devchain.Open(ctx, dir, devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	who := common.HexToAddress("0x00000000000000000000000000000000000bEEF1")
	if _, err := dev.Faucet().Fund(ctx, who, "USDC", big.NewInt(42_000_000)); err != nil {
		t.Fatal(err)
	}
	usdc, pool, head := dev.USDC, dev.Pool, mustBlock(t, dev.Client())
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := devchain.Open(ctx, dir, devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.USDC != usdc || again.Pool != pool || mustBlock(t, again.Client()) < head {
		t.Fatalf("contracts %s/%s → %s/%s, head %d → %d", usdc, pool, again.USDC, again.Pool, head, mustBlock(t, again.Client()))
	}
	if got := tokenBalance(t, again.Client(), again.USDC, who); got.Cmp(big.NewInt(42_000_000)) != 0 {
		t.Fatalf("balance after restart %s", got)
	}
	if _, err := again.Faucet().Fund(ctx, who, "USDC", big.NewInt(1)); err != nil {
		t.Fatalf("the faucet goes on after a restart: %v", err)
	}
}

func mustBlock(t *testing.T, c chain.Client) uint64 {
	t.Helper()
	n, err := c.BlockNumber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func tokenBalance(t *testing.T, c chain.Client, token, who common.Address) *big.Int {
	t.Helper()
	out, err := c.CallContract(context.Background(), ethereum.CallMsg{To: &token, Data: chain.ERC20Call("balanceOf", who)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return new(big.Int).SetBytes(out)
}

// Both adapters of the chain port (the in-process client of the local
// chain and ethclient over HTTP JSON-RPC, as a deployment uses it) answer
// the port's calls alike.
func TestEveryChainClientAnswersThePortAlike(t *testing.T) {
	ctx := context.Background()
	dev, err := devchain.Open(ctx, t.TempDir(), devchain.Options{RPCAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	remote, err := ethclient.Dial(dev.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	key, _ := crypto.GenerateKey()
	who := crypto.PubkeyToAddress(key.PublicKey)
	if _, err := dev.Faucet().Fund(ctx, who, "ETH", big.NewInt(1e18)); err != nil {
		t.Fatal(err)
	}
	hash, err := dev.Faucet().Fund(ctx, who, "USDC", big.NewInt(7))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]chain.Client{"in-process": dev.Client(), "json-rpc over http": remote} {
		t.Run(name, func(t *testing.T) {
			if b, err := c.BalanceAt(ctx, who, nil); err != nil || b.Cmp(big.NewInt(1e18)) != 0 {
				t.Fatalf("balance %v %v", b, err)
			}
			if got := tokenBalance(t, c, dev.USDC, who); got.Int64() != 7 {
				t.Fatalf("token balance %s", got)
			}
			if r, err := c.TransactionReceipt(ctx, hash); err != nil || r.Status != 1 {
				t.Fatalf("receipt %v %v", r, err)
			}
			if tx, pending, err := c.TransactionByHash(ctx, hash); err != nil || pending || tx.Hash() != hash {
				t.Fatalf("transaction %v %v", pending, err)
			}
			to := dev.USDC
			if gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: who, To: &to, Data: chain.ERC20Call("transfer", common.Address{1}, big.NewInt(1))}); err != nil || gas < 21_000 {
				t.Fatalf("estimate %d %v", gas, err)
			}
			_, err := c.EstimateGas(ctx, ethereum.CallMsg{From: who, To: &to, Data: chain.ERC20Call("transfer", common.Address{1}, big.NewInt(8))})
			if err == nil {
				t.Fatal("a transfer beyond the balance estimates")
			}
			if !chain.NotYet(func() error { _, err := c.TransactionReceipt(ctx, common.Hash{1}); return err }()) {
				t.Fatal("an unknown receipt is not 'not yet'")
			}
		})
	}
}
