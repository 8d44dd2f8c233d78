package lambdatest

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"platformapi/shared/base/routes"
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
	"platformapi/shared/base/chain/devchain",
}

// localOnly are packages of the local server and the emulator that no
// deployed function may link: the resource provisioning (CDK creates the
// resources), the SDK's shared-config loader with its SSO, STS and instance
// credential providers (a function's credentials are in its environment),
// the local chain's contract bindings with their deployment code (the pool
// router needs only the ABI), and the all-groups wiring.
var localOnly = []string{
	"platformapi/shared/adapters/awsenv/provision",
	"platformapi/shared/adapters/awsenv/sharedconfig",
	"github.com/aws/aws-sdk-go-v2/config",
	"platformapi/shared/base/chain/contracts",
	"platformapi/shared/app",
	"platformapi/shared/platform",
}

// httpPackages are the HTTP kernel and the OpenAPI framework under it: only
// the functions of endpoint groups serve HTTP.
var httpPackages = []string{
	"platformapi/shared/api",
	"platformapi/shared/lambdaedge/httpedge",
	"github.com/danielgtaylor/huma/v2",
}

// mcpSDK is the MCP server library: the mcp function's alone.
const mcpSDK = "github.com/modelcontextprotocol/go-sdk/"

// deployedFunctions are the directories of functions/ but the local server:
// every Lambda function, including ones added later.
func deployedFunctions(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(moduleRoot, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "local" {
			out = append(out, e.Name())
		}
	}
	return out
}

// servesHTTP: a function named after an endpoint group serves it through
// the HTTP kernel; every other function is a queue worker, a scheduled pass
// or a stream consumer.
func servesHTTP(name string) bool { return len(routes.OfGroup(name)) > 0 }

// Each function links only what it serves: none links the embedded store
// (bbolt is the local server's), an Ethereum node or anything only the
// local server needs; only the functions that touch a chain link
// go-ethereum; only endpoint groups link the HTTP kernel and huma; only mcp
// links the MCP SDK.
func TestFunctionsLinkOnlyTheirOwnGroup(t *testing.T) {
	for _, name := range deployedFunctions(t) {
		t.Run(name, func(t *testing.T) {
			linked := deps(t, name)
			has := func(prefix string) bool {
				return slices.ContainsFunc(linked, func(p string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") })
			}
			if has("go.etcd.io/bbolt") {
				t.Error("links bbolt, the embedded store")
			}
			if got := has("github.com/ethereum/go-ethereum"); got != chainFunctions[name] {
				t.Errorf("links go-ethereum: %v, want %v (only %v do)", got, chainFunctions[name], slices.Sorted(maps.Keys(chainFunctions)))
			}
			for _, p := range nodePackages {
				if slices.Contains(linked, p) {
					t.Errorf("links %s, a node or the local chain", p)
				}
			}
			for _, p := range localOnly {
				if has(p) {
					t.Errorf("links %s, which only the local server and the tests need", p)
				}
			}
			for _, p := range httpPackages {
				if got := has(p); got != servesHTTP(name) {
					t.Errorf("links %s: %v, want %v (only endpoint groups serve HTTP)", p, got, servesHTTP(name))
				}
			}
			if got := has(strings.TrimSuffix(mcpSDK, "/")); got != (name == routes.MCP.Group) {
				t.Errorf("links the MCP SDK: %v, want %v (only %s does)", got, name == routes.MCP.Group, routes.MCP.Group)
			}
		})
	}
}

var (
	linkedOnce sync.Once
	linkedBy   map[string][]string
	linkedErr  error
)

// deps is what go list says the function links: the package and every
// package it imports, directly or not. One go list answers for every
// function (each package's Deps), once per test binary: a go list per
// function loads the module's packages again each time.
func deps(t *testing.T, name string) []string {
	t.Helper()
	linkedOnce.Do(func() {
		args := []string{"list", "-tags", "lambda.norpc", "-f", `{{.ImportPath}} {{join .Deps " "}}`}
		for _, n := range deployedFunctions(t) {
			args = append(args, "./functions/"+n)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = moduleRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
		out, err := cmd.Output()
		if err != nil {
			linkedErr = fmt.Errorf("go list: %v", err)
			return
		}
		linkedBy = map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkgs := strings.Fields(line)
			linkedBy[strings.TrimPrefix(pkgs[0], "platformapi/functions/")] = pkgs
		}
	})
	if linkedErr != nil {
		t.Fatal(linkedErr)
	}
	pkgs, ok := linkedBy[name]
	if !ok {
		t.Fatalf("go list named no function %s", name)
	}
	return pkgs
}

// MiB is the unit of the caps: `ls -lh` and the Lambda console's.
const MiB = 1 << 20

// sizeCap is a function's bootstrap budget: 12 MiB, 14 MiB where
// go-ethereum is the point, 16 MiB with SQLite (the managed databases run
// it in process).
func sizeCap(linked []string) int64 {
	switch {
	case slices.ContainsFunc(linked, func(p string) bool { return strings.HasPrefix(p, "modernc.org/sqlite") }):
		return 16 * MiB
	case slices.ContainsFunc(linked, func(p string) bool { return strings.HasPrefix(p, "github.com/ethereum/go-ethereum/") }):
		return 14 * MiB
	}
	return 12 * MiB
}

// Every bootstrap, built as `make build` builds it, stays within its cap:
// its size is the deployment package Lambda downloads and maps at every
// cold start. One go build makes them all (the shared packages compile
// once); -short leaves it out.
func TestBootstrapsStayWithinTheirCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every function for linux/arm64")
	}
	names := deployedFunctions(t)
	dir := t.TempDir()
	// The Makefile's build/%/bootstrap flags.
	args := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", dir + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "./functions/"+n)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, name := range names {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		limit := sizeCap(deps(t, name))
		t.Logf("%-18s %s (%d bytes; cap %s)", name, mib(st.Size()), st.Size(), mib(limit))
		if st.Size() > limit {
			t.Errorf("%s: bootstrap is %s, over its cap of %s", name, mib(st.Size()), mib(limit))
		}
	}
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/MiB) }
