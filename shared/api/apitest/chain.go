package apitest

import (
	"context"
	"os"
	"sync"
	"testing"

	"platformapi/shared/chain/devchain"
)

var (
	chainOnce sync.Once
	sharedDev *devchain.Chain
	chainDir  string
	chainErr  error
)

// SharedChain is one local development chain for the whole test binary
// (starting one deploys the test tokens and the pool: once is enough; every
// test makes its own wallets). MainWithChain removes it at the end.
func SharedChain(tb testing.TB) *devchain.Chain {
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

// MainWithChain runs a test binary that uses SharedChain and removes the
// chain afterwards: func TestMain(m *testing.M) { apitest.MainWithChain(m) }.
func MainWithChain(m *testing.M) {
	code := m.Run()
	if sharedDev != nil {
		sharedDev.Close()
	}
	if chainDir != "" {
		os.RemoveAll(chainDir)
	}
	os.Exit(code)
}
