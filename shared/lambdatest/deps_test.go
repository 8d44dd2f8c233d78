package lambdatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Each function links only what it serves: none links the embedded store
// (bbolt is the local server's), and only the credits function, which sells
// credits through x402, links go-ethereum.
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
			if strings.Contains(deps, "go.etcd.io/bbolt") {
				t.Error("links bbolt, the embedded store")
			}
			if strings.Contains(deps, "github.com/ethereum/go-ethereum") != (name == "credits") {
				t.Errorf("links go-ethereum: %v, want only the credits function to", strings.Contains(deps, "go-ethereum"))
			}
			if strings.Contains(deps, "platformapi/shared/app\n") || strings.Contains(deps, "platformapi/shared/platform\n") {
				t.Error("links the all-groups wiring of the local server")
			}
		})
	}
}
