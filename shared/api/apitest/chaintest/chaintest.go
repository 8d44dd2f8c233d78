// Package chaintest serves managed wallets and swaps in apitest servers on
// the local development chain. It is its own package so that only the
// tests that reach a chain link the Ethereum node under it.
package chaintest

import (
	"context"
	"os"
	"sync"
	"testing"

	"platformapi/shared/api/apitest"
	"platformapi/shared/chain"
	"platformapi/shared/chain/devchain"
	"platformapi/shared/ports"
	"platformapi/shared/testkit/teststores"
	"platformapi/shared/wallets"
)

var (
	chainOnce sync.Once
	sharedDev *devchain.Chain
	chainDir  string
	chainErr  error
)

// Shared is one local development chain for the whole test binary
// (starting one deploys the test tokens and the pool: once is enough; every
// test makes its own wallets). Main removes it at the end.
func Shared(tb testing.TB) *devchain.Chain {
	tb.Helper()
	chainOnce.Do(func() {
		chainDir, chainErr = os.MkdirTemp("", "devchain-")
		if chainErr == nil {
			sharedDev, chainErr = devchain.Open(context.Background(), chainDir, devchain.Options{RPCAddr: "127.0.0.1:0"})
		}
	})
	if chainErr != nil {
		tb.Fatal(chainErr)
	}
	return sharedDev
}

// Main runs a test binary that uses Shared and removes the chain
// afterwards: func TestMain(m *testing.M) { chaintest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if sharedDev != nil {
		sharedDev.Close()
	}
	if chainDir != "" {
		os.RemoveAll(chainDir)
	}
	os.Exit(code)
}

// On serves managed wallets and swaps on dev, with the wallets worker
// running.
func On(dev *devchain.Chain) apitest.Part {
	return func(t *testing.T, _ teststores.Backend, _ ports.Ports) ([]any, []string) {
		nets, err := chain.NewNetworks(dev.Network())
		if err != nil {
			t.Fatal(err)
		}
		return []any{nets}, []string{wallets.Queue.Consumer}
	}
}
