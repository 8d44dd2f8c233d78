package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The scanner finds a variable however the code reads it, and never a
// default value or a message that merely looks like a name.
func TestTheScannerFindsEveryWayTheCodeReadsAVariable(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"os.Getenv", `func f() { _ = os.Getenv("LOG_LEVEL") }`, []string{"LOG_LEVEL"}},
		{"os.LookupEnv", `func f() { _, _ = os.LookupEnv("ADDR") }`, []string{"ADDR"}},
		{"a helper with a default", `func f() { _ = envOr("X402_ASSET_NAME", "USDC") }`, []string{"X402_ASSET_NAME"}},
		{"a getenv parameter", `func f(getenv func(string) string) { _ = getenv("TRADING_VENUE") }`, []string{"TRADING_VENUE"}},
		{"a constant named Env", `const SecretEnv = "ARCHIVE_SIGNING_SECRET_ARN"`, []string{"ARCHIVE_SIGNING_SECRET_ARN"}},
		{"names read in a loop", `func ConfigFromEnv() { for n := range map[string]int{"REQUEST_TIMEOUT": 1, "HOLD_GRACE": 2} { _ = os.Getenv(n) } }`, []string{"REQUEST_TIMEOUT", "HOLD_GRACE"}},
		{"a prefix", `func FromEnv(env []string) { _, _ = strings.CutPrefix(env[0], "RPC_URL_") }`, []string{"RPC_URL_"}},
		{"not a value in an env function", `func FromEnv() { _ = "USDC"; _ = "eip155:84532" }`, nil},
		{"not a literal elsewhere", `func f() { _ = "NOT_READ" }`, nil},
		{"a declared queue", `var Runs = Queue{Name: "runs", Env: "RUNS"}`, []string{"RUNS_QUEUE_URL", "RUNS_QUEUE_NAME"}},
		{"a group's queue", `var Queue = work.Queue{Name: "examples", Env: "EXAMPLES"}`, []string{"EXAMPLES_QUEUE_URL", "EXAMPLES_QUEUE_NAME"}},
		{"not another package's Queue", `var q = sqs.Queue{Name: "x", Env: "OTHER"}`, nil},
		{"not a lowercase argument", `func f() { _ = os.Getenv("path") }`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n"+tc.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := envReads(f)
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

// A generated part is rewritten between its markers and nowhere else; an
// unknown part or one without its end line is an error, not a silent skip.
func TestAGeneratedPartIsRewrittenBetweenItsMarkersOnly(t *testing.T) {
	frags := map[string]string{"events": "NEW\n"}
	src := "prose\n<!-- generated:events (go run x) -->\nOLD\n<!-- end generated:events -->\nmore prose\n"
	got, names, err := fill([]byte(src), frags)
	if err != nil {
		t.Fatal(err)
	}
	if want := "prose\n<!-- generated:events (go run x) -->\nNEW\n<!-- end generated:events -->\nmore prose\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !slices.Equal(names, []string{"events"}) {
		t.Errorf("names %v", names)
	}
	for _, bad := range []string{
		"<!-- generated:nope (x) -->\n<!-- end generated:nope -->\n",
		"<!-- generated:events (x) -->\nOLD\n",
	} {
		if _, _, err := fill([]byte(bad), frags); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#+ (.+)$`)
)

// anchor is GitHub's id for a heading: lowercase, punctuation dropped,
// spaces as hyphens.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Moving the reference into pages made many links relative: each link of
// the README and the docs to a file of the repository names a file that
// exists, and its #fragment a heading of that file.
func TestEveryRelativeLinkOfTheREADMEAndTheDocsResolves(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append(pages, filepath.Join(root, "README.md"))
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(src), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(link, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s: link %s: %v", page, link, err)
				continue
			}
			if frag == "" {
				continue
			}
			found := false
			for _, h := range heading.FindAllStringSubmatch(string(body), -1) {
				if anchor(h[1]) == frag {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: link %s: no heading with that anchor in %s", page, link, target)
			}
		}
	}
}
