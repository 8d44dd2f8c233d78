package platform_test

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// quickstart is the program both READMEs show; it is compiled with this
// module (go vet, go build) and run against the real server by the sdktest
// module, so what a reader pastes is what was built and run.
const quickstart = "examples/quickstart/main.go"

// The SDK's README starts with the install commands and then shows the
// quickstart program exactly; the repository's README shows it too (that
// file is absent from a downloaded module, and then only the SDK's is held).
func TestTheREADMEsShowTheQuickstartProgramAsCompiled(t *testing.T) {
	src, err := os.ReadFile(quickstart)
	if err != nil {
		t.Fatal(err)
	}
	block := "```go\n" + string(src) + "```\n"
	own, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(own)
	at := strings.Index(readme, "```go\n")
	if at < 0 || !strings.HasPrefix(readme[at:], block) {
		t.Errorf("sdk/go/README.md: its first Go block is not %s as it is", quickstart)
	}
	if install := strings.Index(readme, "go get "); install < 0 || install > at {
		t.Error("sdk/go/README.md does not start with the install commands (go get) before the program")
	}
	repo, err := os.ReadFile("../../README.md")
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(repo), block) {
		t.Errorf("README.md: its Go section does not show %s as it is", quickstart)
	}
}
