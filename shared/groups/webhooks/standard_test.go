package webhooks_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/groups/webhooks"
)

// TestStandardWebhooksLibraryVerifiesDeliveries delivers real events to a
// receiver built on the npm standardwebhooks package (testdata/
// standardwebhooks, pinned), which hands the secret string to the library
// as given: it verifies a delivery, both signatures during a rotation, and
// refuses a delivery it holds the wrong secret for. make
// standardwebhooks-test installs the package and sets
// STANDARDWEBHOOKS_RECEIVER to the script.
func TestStandardWebhooksLibraryVerifiesDeliveries(t *testing.T) {
	script := os.Getenv("STANDARDWEBHOOKS_RECEIVER")
	if script == "" {
		t.Skip("STANDARDWEBHOOKS_RECEIVER not set; make standardwebhooks-test runs this with the npm package")
	}
	secrets := filepath.Join(t.TempDir(), "secrets")
	trust := func(ss ...string) {
		t.Helper()
		if err := os.WriteFile(secrets, []byte(strings.Join(ss, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	trust()
	cmd := exec.Command("node", script, secrets)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("the receiver did not start: %s", stderr.String())
	}
	url, ok := strings.CutPrefix(sc.Text(), "listening on ")
	if !ok {
		t.Fatalf("the receiver printed %q", sc.Text())
	}

	f := newFixture(t, teststores.Embedded)
	w, old, err := f.newRepo(webhooks.Guard{AllowPrivate: true}).Create(context.Background(), as(f.root, ""), webhooks.CreateRequest{URL: url + "/hook", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	wk := f.worker(workerOpts{allowPrivate: true})
	deliver := func() error {
		t.Helper()
		f.publish("project.created")
		return wk.Handle(context.Background(), receiveOne(t, f.q))
	}

	trust(old)
	if err := deliver(); err != nil {
		t.Fatalf("the library refused a delivery: %v\n%s", err, stderr.String())
	}
	_, fresh, err := f.repo.RotateSecret(context.Background(), as(f.root, ""), w.ID)
	if err != nil {
		t.Fatal(err)
	}
	trust(old, fresh)
	if err := deliver(); err != nil {
		t.Fatalf("the library refused a delivery signed during a rotation: %v\n%s", err, stderr.String())
	}
	trust(webhooks.NewSecret())
	if err := deliver(); !errors.Is(err, webhooks.ErrRetry) || !strings.Contains(stderr.String(), "No matching signature found") {
		t.Fatalf("with another secret: %v\n%s", err, stderr.String())
	}
}
