package stacks

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/base/routes"
)

// TestFunctionTableIsConsistent checks what CloudFormation would only
// reject half-way through a deployment, or would accept and misroute.
func TestFunctionTableIsConsistent(t *testing.T) {
	name := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	path := regexp.MustCompile(`^/$|^(/([A-Za-z0-9._-]+|\{[A-Za-z]+\}))+$`)
	names, routes := map[string]bool{}, map[string]string{}
	defaults := 0
	for _, f := range Functions {
		if !name.MatchString(f.Name) || names[f.Name] {
			t.Errorf("%q: function names are unique lower-case directory names", f.Name)
		}
		names[f.Name] = true
		if f.MemoryMiB < 128 || f.MemoryMiB > 10240 {
			t.Errorf("%s: %d MiB is outside Lambda's 128-10240", f.Name, f.MemoryMiB)
		}
		for _, r := range f.Routes() {
			if r == "$default" {
				defaults++
			} else if !path.MatchString(r) {
				t.Errorf("%s: route %q is not a path of literal and {parameter} segments", f.Name, r)
			}
			if other, dup := routes[r]; dup {
				t.Errorf("route %q belongs to both %s and %s", r, other, f.Name)
			}
			routes[r] = f.Name
		}
		consumes := 0
		if f.Uses.Has(deploy.ConsumeAuditStream) {
			consumes++
		}
		for _, q := range Queues {
			if f.Uses.Has(deploy.Consume(q)) {
				consumes++
			}
		}
		switch {
		case f.Worker() && (len(f.Routes()) > 0 || consumes != 1 || f.BatchSize < 1 || f.BatchSize > maxBatch(f)):
			t.Errorf("%s: a worker consumes one queue or stream, in batches of 1-%d, and has no routes", f.Name, maxBatch(f))
		case f.Scheduled() && (f.Worker() || len(f.Routes()) > 0 || f.Rate()%time.Minute != 0 || f.Timeout >= f.Rate()):
			t.Errorf("%s: a scheduled function has no routes nor queue, a rate of whole minutes and a timeout under it", f.Name)
		case f.Scheduled():
		case f.Subscribed() && (f.Worker() || len(f.Routes()) > 0):
			t.Errorf("%s: a function log subscriptions invoke has no routes nor queue", f.Name)
		case f.Subscribed():
		case !f.Worker() && len(f.Routes()) == 0:
			t.Errorf("%s: neither routes, a queue nor a schedule; nothing would ever invoke it", f.Name)
		case !f.Worker() && f.Timeout >= 30*time.Second:
			t.Errorf("%s: timeout %v; the HTTP API gives up at 30s", f.Name, f.Timeout)
		}
	}
	if defaults != 1 {
		t.Errorf("%d functions own $default, want exactly one", defaults)
	}
}

// maxBatch is the largest batch a worker takes: 10 SQS messages, or 1,000
// stream records (a rollup of 1,000 events is 31 transactions, well within
// its timeout).
func maxBatch(f Function) int {
	if f.Uses.Has(deploy.ConsumeAuditStream) {
		return 1000
	}
	return 10
}

// TestEveryFunctionInTheTreeIsDeployed fails when functions/<name>/main.go
// exists but the table has no line for it: it would build, and never run.
// functions/local is the all-in-one development server, not a Lambda.
func TestEveryFunctionInTheTreeIsDeployed(t *testing.T) {
	root := filepath.Join("..", "..", "functions")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no functions/ directory yet")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "local" {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, e.Name(), "main.go"))
		if err != nil || !bytes.Contains(src, []byte("package main")) {
			continue // a shared helper package, not a Lambda
		}
		if !slices.ContainsFunc(Functions, func(f Function) bool { return f.Name == e.Name() }) {
			t.Errorf("functions/%s is a main package but has no line in Functions", e.Name())
		}
	}
}

// TestEveryEndpointReachesTheFunctionOfItsGroup routes every endpoint of the
// application's route table the way API Gateway does (a matching path,
// literal segments before parameters, then $default) and checks it lands
// on the function of its group. A mismatch would deploy cleanly and answer
// 404 for that endpoint.
func TestEveryEndpointReachesTheFunctionOfItsGroup(t *testing.T) {
	check := func(path, group string) {
		t.Helper()
		if got := gatewayTarget(path); got != group {
			t.Errorf("%s is served by %s but API Gateway sends it to %s", path, group, got)
		}
	}
	for _, rt := range routes.Public {
		check(rt.Path, rt.Group)
		check("/v1"+rt.Path, rt.Group)
	}
	for _, rt := range routes.Table {
		check("/v1"+rt.Path, rt.Group)
	}
	check("/no-such-endpoint", "public")
}

// gatewayTarget is HTTP API route selection for ANY routes: the route
// whose segments match, preferring literal segments over parameters from
// the left, else $default. Concrete paths are checked, so a parameter
// segment of the table's path stands for some value.
func gatewayTarget(path string) string {
	path = regexp.MustCompile(`\{[A-Za-z]+\}`).ReplaceAllString(path, "x")
	best, bestScore, fallback := "", "", ""
	for _, f := range Functions {
		for _, r := range f.Routes() {
			if r == "$default" {
				fallback = f.Name
				continue
			}
			ps, xs := strings.Split(r, "/"), strings.Split(path, "/")
			if len(ps) != len(xs) {
				continue
			}
			score, ok := "", true
			for i := range ps {
				switch {
				case strings.HasPrefix(ps[i], "{"):
					score += "0"
				case ps[i] == xs[i]:
					score += "1"
				default:
					ok = false
				}
			}
			if ok && score > bestScore {
				best, bestScore = f.Name, score
			}
		}
	}
	if best == "" {
		return fallback
	}
	return best
}
