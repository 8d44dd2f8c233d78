package sdktest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The program both READMEs show (the SDK module's readme test holds them to
// it) is built as a user would build it and run against the real server
// with a fresh credit token: what a reader pastes works, not only compiles.
func TestTheQuickstartProgramOfTheREADMEsRunsAgainstTheServer(t *testing.T) {
	f := setup(t)
	bin := filepath.Join(t.TempDir(), "quickstart")
	build := exec.Command("go", "build", "-o", bin, "./examples/quickstart")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.Command(bin)
	run.Env = append(os.Environ(), "BASE_URL="+f.url, "TOKEN="+f.token(t, 50))
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("quickstart: %v\n%s", err, out)
	}
	for _, want := range []string{"balance: 50 credits\n", "child key: key_", "charged: 0.01 result: {", "project: prj_"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
