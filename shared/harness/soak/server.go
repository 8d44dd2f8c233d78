package soak

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"platformapi/shared/adapters/testkit/testlog"
)

// Build compiles the local server with the fault hooks (the soakfaults
// tag) into dir and returns the binary's path.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "local-soak")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "soakfaults", "-o", bin, "platformapi/functions/local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the server: %v\n%s", err, out)
	}
	return bin, nil
}

// Server is the real local server as a child process the soak kills and
// restarts on the same data directory.
type Server struct {
	Bin, DataDir string
	Env          []string // beside DATA_DIR and ADDR
	Args         []string

	mu       sync.Mutex
	cmd      *exec.Cmd
	base     string
	withheld bool
	exited   chan struct{}
	logs     *testlog.Buffer
	lives    int
	maxRSS   int64
}

// Start runs a new life of the server with extra environment for this
// life only (a crash point), and waits until it listens.
func (s *Server) Start(extra ...string) error {
	cmd := exec.Command(s.Bin, s.Args...)
	cmd.Env = append(append(append(os.Environ(), "ADDR=127.0.0.1:0", "DATA_DIR="+s.DataDir), s.Env...), extra...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	logs := &testlog.Buffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				listening <- rest
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case base := <-listening:
		s.mu.Lock()
		s.cmd, s.base, s.exited, s.logs = cmd, base, exited, logs
		s.lives++
		s.mu.Unlock()
		return nil
	case <-exited:
		return fmt.Errorf("the server exited before it listened: %s", logs.String())
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		return fmt.Errorf("the server did not listen within 90 s: %s", logs.String())
	}
}

// Base is the current life's URL for the workers: "" between lives and
// while the life is withheld from them.
func (s *Server) Base() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.withheld {
		return ""
	}
	return s.base
}

// URL is the current life's URL even while it is withheld: for the
// harness's own calls.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base
}

// Withhold hides the lives from the workers until it is called with
// false: the harness puts the server in a chosen state before they retry.
func (s *Server) Withhold(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.withheld = on
}

// Exited is closed when the current life ends, however it ends.
func (s *Server) Exited() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited
}

// Kill ends the current life with SIGKILL and waits until it is gone.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	s.sampleRSS()
	_ = cmd.Process.Kill()
	<-exited
	s.mu.Lock()
	s.base = ""
	s.mu.Unlock()
}

// Stop ends the current life with SIGTERM and waits for a clean exit.
func (s *Server) Stop() error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	s.sampleRSS()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return fmt.Errorf("no exit 60 s after SIGTERM")
	}
	if c := cmd.ProcessState.ExitCode(); c != 0 {
		return fmt.Errorf("exit status %d after SIGTERM: %s", c, s.Logs())
	}
	return nil
}

// Lives is how many times the server started.
func (s *Server) Lives() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lives
}

// Logs is what the current life wrote to stderr.
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logs == nil {
		return ""
	}
	return s.logs.String()
}

// MaxRSS is the largest resident set any life reached (Linux's VmHWM),
// sampled when a life ends and whenever SampleRSS is called.
func (s *Server) MaxRSS() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxRSS
}

// sampleRSS reads the current life's high-water mark of resident memory.
func (s *Server) sampleRSS() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			s.maxRSS = max(s.maxRSS, kb<<10)
		}
	}
}
