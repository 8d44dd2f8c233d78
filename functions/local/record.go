package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"platformapi/shared/app"
)

// recordFile, in DATA_DIR, names the server serving that directory: the
// development commands read the address it actually listens on (ADDR may
// end in :0, or another process may hold ADDR) instead of assuming one.
const recordFile = "server.json"

// instanceHeader carries, on the local server's /health answers, the
// instance its record names: what tells this server from any other process
// answering /health on the same port.
const instanceHeader = "X-Local-Server-Instance"

// record is what recordFile holds.
type record struct {
	URL      string `json:"url"`
	PID      int    `json:"pid"`
	Instance string `json:"instance"`
}

// writeRecord names this process as the server of dir, at url, before it
// answers any request: whoever sees its instance on /health finds the
// record already written. The rename makes the record whole or absent.
func writeRecord(dir, url string) (record, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	rec := record{URL: url, PID: os.Getpid(), Instance: hex.EncodeToString(b[:])}
	raw, _ := json.Marshal(rec)
	tmp := filepath.Join(dir, recordFile+".tmp")
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o600); err != nil {
		return rec, err
	}
	return rec, os.Rename(tmp, filepath.Join(dir, recordFile))
}

// removeRecord removes the record at a clean exit, unless another server
// of dir has written its own since.
func removeRecord(dir string, rec record) {
	if cur, ok := readRecord(dir); ok && cur.Instance == rec.Instance {
		_ = os.Remove(filepath.Join(dir, recordFile))
	}
}

// readRecord is the record of dir's running server; false when there is
// none, or when the process that wrote it is gone (a killed server leaves
// its record behind).
func readRecord(dir string) (record, bool) {
	raw, err := os.ReadFile(filepath.Join(dir, recordFile))
	if err != nil {
		return record{}, false
	}
	var rec record
	if json.Unmarshal(raw, &rec) != nil || rec.URL == "" || rec.Instance == "" || !alive(rec.PID) {
		return record{}, false
	}
	return rec, true
}

// alive reports whether a process with this id exists (signal 0 checks
// without signalling).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// withInstance stamps the instance on /health answers, and answers a
// browser's /favicon.ico with no content (the console and the reference
// have no icon; a 404 there is noise in the browser's console). Every
// other request goes through as it is.
func withInstance(next http.Handler, instance string) http.Handler {
	value := []string{instance}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			w.Header()[instanceHeader] = value
		case "/favicon.ico":
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				w.Header().Set("Cache-Control", "public, max-age=86400")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// errNotOurs is a /health answered by a process that is not the server of
// the data directory: waiting longer cannot help.
var errNotOurs = errors.New("not the server of the data directory")

// waitCommand waits until the server of DATA_DIR answers /health and
// prints its URL (alone on stdout, for $(…)); it fails at once when
// another process answers where that server should, and names it.
func waitCommand(cfg app.Config, args []string) error {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait (the first `make run` compiles the server and its dependencies first)")
	dataDirFlag(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		return err
	}
	deadline := time.Now().Add(*timeout)
	for {
		url, err := probe(cfg.DataDir, listenAddr())
		switch {
		case err == nil:
			fmt.Println(url)
			return nil
		case errors.Is(err, errNotOurs):
			return err
		case time.Now().After(deadline):
			return fmt.Errorf("no server of %s answered within %s (%v); is `make run` running? Its output says why it stopped", absDir(cfg.DataDir), *timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// probe asks /health of dir's server (its record's URL, else ADDR) whether
// it is that server: its answer's instance must be the one the record names.
func probe(dir, addr string) (string, error) {
	url := ""
	if rec, ok := readRecord(dir); ok {
		url = rec.URL
	} else if host, port, err := net.SplitHostPort(addr); err == nil && port != "0" {
		if host == "" || net.ParseIP(host).IsUnspecified() {
			host = "127.0.0.1"
		}
		url = "http://" + net.JoinHostPort(host, port)
	} else {
		return "", errors.New("the server has not started yet")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("nothing answers at %s yet", url)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	// Read after the answer: a server writes its record before it answers.
	rec, ok := readRecord(dir)
	got := res.Header.Get(instanceHeader)
	switch {
	case ok && got == rec.Instance && res.StatusCode == http.StatusOK:
		return rec.URL, nil
	case ok && got == rec.Instance:
		return "", fmt.Errorf("%s/health answers %d", rec.URL, res.StatusCode)
	}
	return "", fmt.Errorf("%s answers /health, but it is %w %s: another process holds the port (the server then stops with \"cannot listen on\"). Stop that process, or start the server on another port and use the same ADDR here, e.g. ADDR=127.0.0.1:8081",
		url, errNotOurs, absDir(dir))
}

// secretCommand prints the secret of the key a POST /v1/api-keys answer
// holds (key.json by default), alone on stdout, for $(…); an answer that
// holds a problem instead fails with the problem's status, code and detail.
func secretCommand(_ app.Config, args []string) error {
	fs := flag.NewFlagSet("secret", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	path := "key.json"
	if fs.NArg() > 1 {
		return unknownCommand(fs.Arg(1))
	}
	if fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("no key to read: %w", err)
	}
	// A key's status is a word, a problem's a number: each field is read
	// as what it is.
	var answer map[string]any
	if json.Unmarshal(raw, &answer) != nil {
		return fmt.Errorf("%s is not a JSON answer of POST /v1/api-keys (%d bytes)", path, len(raw))
	}
	if secret, _ := answer["secret"].(string); secret != "" {
		fmt.Println(secret)
		return nil
	}
	if code, _ := answer["code"].(string); code != "" {
		status, _ := answer["status"].(float64)
		detail, _ := answer["detail"].(string)
		return fmt.Errorf("%s holds no key but a problem: %d %s: %s", path, int(status), code, detail)
	}
	return fmt.Errorf("%s holds no secret: the secret is shown once, by the answer that created the key", path)
}
