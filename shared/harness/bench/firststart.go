package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"platformapi/shared/base/diskuse"
)

// firstStart is what a new user's first `make run` costs: the local server
// (every group, the development chain included) is built, started once on
// an empty data directory and stopped, and the result is how long it took
// to answer /health and how much disk the directory then holds, in
// allocated blocks as du counts them (preallocated files count whole).
func firstStart(ctx context.Context, root, dir string) (took time.Duration, bytes int64, err error) {
	bin := filepath.Join(dir, "local-server")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./functions/local")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("bench: build the local server: %v: %s", err, out)
	}
	data := filepath.Join(dir, "first-start")
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "ADDR=127.0.0.1:0", "DATA_DIR="+data)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if base, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				listening <- base
			}
		}
	}()
	var base string
	select {
	case base = <-listening:
	case <-time.After(time.Minute):
		return 0, 0, errors.New("bench: the local server did not start within a minute")
	}
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(began) > time.Minute {
			return 0, 0, errors.New("bench: /health did not answer within a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	took = time.Since(began)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, 0, err
	}
	if err := cmd.Wait(); err != nil {
		return 0, 0, fmt.Errorf("bench: the local server's shutdown: %w", err)
	}
	bytes, err = diskuse.Allocated(data)
	return took, bytes, err
}
