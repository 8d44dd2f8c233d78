package stackemu

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// sitecustomize corrects moto's signature check for escaped query strings
// (see the file); the private moto's Python loads it at start.
//
//go:embed motopatch/sitecustomize.py
var sitecustomize []byte

// privateMoto is a moto server of the stack's own, started through the
// repository's .ci/with-moto (the same serialised moto the tests use), so
// that turning IAM enforcement on touches no one else's emulator: moto's
// enforcement switch is process-wide.
type privateMoto struct {
	endpoint string
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	exited   chan struct{}
	patchDir string
}

// setupActions is INITIAL_NO_AUTH_ACTION_COUNT for the stack's moto: the
// number of unauthenticated calls moto allows before it enforces IAM. The
// setup's count varies (CloudFormation is polled), so the budget is ample
// and enforce ends it at the moment setup is done.
const setupActions = "1000000"

// startMoto runs withMoto with a command that prints the endpoint and waits
// for its stdin to close; closing it (stop) ends the command, and with-moto
// then stops its server.
func startMoto(ctx context.Context, withMoto string) (*privateMoto, error) {
	patchDir, err := os.MkdirTemp("", "stack-moto")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(patchDir, "sitecustomize.py"), sitecustomize, 0o644); err != nil {
		_ = os.RemoveAll(patchDir)
		return nil, err
	}
	cmd := exec.Command(withMoto, "sh", "-c", `echo "$AWS_ENDPOINT_URL"; exec cat >/dev/null`)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "AWS_ENDPOINT_URL" && k != "INITIAL_NO_AUTH_ACTION_COUNT" && k != "PYTHONPATH" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "INITIAL_NO_AUTH_ACTION_COUNT="+setupActions, "PYTHONPATH="+patchDir)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(patchDir)
		return nil, fmt.Errorf("stackemu: %s: %w", withMoto, err)
	}
	m := &privateMoto{cmd: cmd, stdin: stdin, exited: make(chan struct{}), patchDir: patchDir}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		close(m.exited)
	}()
	select {
	case line, ok := <-lines:
		if !ok || !strings.HasPrefix(line, "http") {
			m.stop()
			return nil, fmt.Errorf("stackemu: %s started no moto (%q)", withMoto, line)
		}
		m.endpoint = line
		return m, nil
	case <-ctx.Done():
		m.stop()
		return nil, ctx.Err()
	}
}

// enforce makes every further call to moto authenticated and authorised:
// moto's own switch (its test decorator set_initial_no_auth_action_count
// uses it), which sets the allowance to zero calls from now on.
func (m *privateMoto) enforce(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint+"/moto-api/reset-auth", strings.NewReader("0"))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("stackemu: enforce IAM: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("stackemu: enforce IAM: %s: %s", resp.Status, body)
	}
	return nil
}

// stop ends the command and its moto; the process group is killed if it
// does not end in time.
func (m *privateMoto) stop() {
	_ = m.stdin.Close()
	select {
	case <-m.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.exited
	}
	_ = os.RemoveAll(m.patchDir)
}
