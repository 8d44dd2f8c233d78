package lambdatest

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// chainFunctions link go-ethereum: credits settles x402 payments, the
// wallet functions and swaps sign and send transactions.
var chainFunctions = map[string]bool{"credits": true, "wallets": true, "wallets-worker": true, "wallets-recheck": true, "swaps": true}

// nodePackages run an Ethereum node, or the local development chain built
// on one: megabytes of code and a listening p2p stack that no function may
// carry. Functions reach chains only through JSON-RPC clients.
var nodePackages = []string{
	"github.com/ethereum/go-ethereum/eth",
	"github.com/ethereum/go-ethereum/eth/catalyst",
	"github.com/ethereum/go-ethereum/node",
	"platformapi/shared/chain/devchain",
}

// Each function links only what it serves: none links the embedded store
// (bbolt is the local server's) nor an Ethereum node, and only the
// functions that touch a chain link go-ethereum.
func TestFunctionsLinkOnlyTheirOwnGroup(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(moduleRoot, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == "local" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", "./functions/"+name)
			cmd.Dir = moduleRoot
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			deps := string(out)
			linked := map[string]bool{}
			for _, p := range strings.Fields(deps) {
				linked[p] = true
			}
			if strings.Contains(deps, "go.etcd.io/bbolt") {
				t.Error("links bbolt, the embedded store")
			}
			if got := strings.Contains(deps, "github.com/ethereum/go-ethereum"); got != chainFunctions[name] {
				t.Errorf("links go-ethereum: %v, want %v (only %v do)", got, chainFunctions[name], slices.Sorted(maps.Keys(chainFunctions)))
			}
			for _, p := range nodePackages {
				if linked[p] {
					t.Errorf("links %s, a node or the local chain", p)
				}
			}
			if strings.Contains(deps, "platformapi/shared/app\n") || strings.Contains(deps, "platformapi/shared/platform\n") {
				t.Error("links the all-groups wiring of the local server")
			}
		})
	}
}
