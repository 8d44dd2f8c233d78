// Package chaintest serves managed wallets and swaps in apitest servers on
// the local development chain. It is its own package so that only the
// tests that reach a chain link the Ethereum node under it.
package chaintest

import (
	"context"
	"os"
	"sync"
	"testing"

	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/api"
	"platformapi/shared/base/chain"
	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/groups/swaps/walletsenv"
	"platformapi/shared/groups/wallets"
	"platformapi/shared/harness/apitest"
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

// Serve names the groups of the test binary that On serves on a chain
// (walletsapi.On, and swapsapi.On where it serves swaps), in one line
// beside apitest.Serve: var _ = chaintest.Serve(walletsapi.On, swapsapi.On).
func Serve(groups ...func(*walletsenv.Shared) api.NewGroup) bool {
	onChain.Lock()
	defer onChain.Unlock()
	onChain.groups = append(onChain.groups, groups...)
	return true
}

var onChain struct {
	sync.Mutex
	groups []func(*walletsenv.Shared) api.NewGroup
}

// On serves the groups Served on dev, wired together once, with the
// wallets worker running.
func On(dev *devchain.Chain) apitest.Part {
	return func(t *testing.T, _ teststores.Backend, _ ports.Ports) ([]api.NewGroup, []string) {
		nets, err := chain.NewNetworks(dev.Network())
		if err != nil {
			t.Fatal(err)
		}
		sh := walletsenv.NewShared(nets)
		onChain.Lock()
		defer onChain.Unlock()
		if len(onChain.groups) == 0 {
			t.Fatal("chaintest: the test binary names no group to serve on the chain (chaintest.Serve)")
		}
		var groups []api.NewGroup
		for _, on := range onChain.groups {
			groups = append(groups, on(sh))
		}
		return groups, []string{wallets.Queue.Consumer}
	}
}
