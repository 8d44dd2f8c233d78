package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// What the repository may not say of itself: a reader has the repository
// and nothing else, so a rule is stated where it applies, not pointed at by
// the number of a tracker entry or of a section of a document they do not
// have.
var outsideReference = []struct {
	what string
	re   *regexp.Regexp
}{
	{"a tracker entry by number", regexp.MustCompile(`(?i)\b(issues?|tickets?|sessions?|pr|pull request)\s*#?\s*[0-9]+\b`)},
	{"a section of the specification by number", regexp.MustCompile(`(?i)\bspec(ification)?\b[\s(§]*[0-9]+(\.[0-9]+)+`)},
	{"a section of the specification", regexp.MustCompile(`(?i)(?:^|\s)\(spec(ification)?\)`)},
	{"sections by number", regexp.MustCompile(`(?:^|\s)\([1-9]\.[0-9]+(?:–[0-9.]+)?(?:, ?[1-9](?:\.[0-9]+)?(?:–[0-9.]+)?)+\)`)},
	{"a section by number", regexp.MustCompile(`(?i)(\bsection\s+|§\s*)[0-9]+(\.[0-9]+)*`)},
	{"a document kept outside the repository", regexp.MustCompile(`\b(CONTRACT|DESIGN)\.md\b|platform-api-spec`)},
}

// relPath is a relative path that names something (a link, an include, a
// flag default); a bare "../.." of a recipe that first changes directory
// names nothing.
var relPath = regexp.MustCompile(`(?:\.\./)+[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.-]+)*`)

// rfcCitation is a section of a public standard, which a reader can look up.
var rfcCitation = regexp.MustCompile(`\bRFC\s*[0-9]+`)

func TestTrackedTextSpeaksOnlyOfTheRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing tracked to read", err)
	}
	self, _ := filepath.Abs("selfcontained_test.go")
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		path := filepath.Join(root, rel)
		if path == self || strings.Contains(rel, "node_modules/") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil || bytes.IndexByte(src, 0) >= 0 {
			continue // a deleted file or a binary one
		}
		for _, v := range outsideReferences(root, rel, string(src)) {
			t.Errorf("%s", v)
		}
	}
}

// outsideReferences lists each place of the file rel (below root) that
// names something outside the repository.
func outsideReferences(root, rel, src string) []string {
	var found []string
	for n, line := range strings.Split(src, "\n") {
		for _, o := range outsideReference {
			for _, m := range o.re.FindAllStringIndex(line, -1) {
				if o.what == "a section by number" && rfcCitation.MatchString(line[:m[0]]) {
					continue
				}
				found = append(found, rel+":"+strconv.Itoa(n+1)+": "+o.what+": "+line[m[0]:m[1]])
			}
		}
		for _, p := range relPath.FindAllString(line, -1) {
			target := filepath.Join(root, filepath.Dir(rel), p)
			if r, err := filepath.Rel(root, target); err != nil || r == ".." || strings.HasPrefix(r, "../") {
				found = append(found, rel+":"+strconv.Itoa(n+1)+": a path leaving the repository: "+p)
			}
		}
	}
	// A comment wrapped between "(spec" and "4.2)", or between "(issue"
	// and "12)", is one reference.
	for _, w := range wrapped {
		for _, m := range w.re.FindAllStringIndex(src, -1) {
			found = append(found, rel+":"+strconv.Itoa(strings.Count(src[:m[0]], "\n")+1)+": "+w.what+", wrapped")
		}
	}
	return found
}

var wrapped = []struct {
	what string
	re   *regexp.Regexp
}{
	{"a section of the specification by number", regexp.MustCompile(`(?i)\bspec(ification)?\s*\n\s*(//|#|\*)?\s*[0-9]+(\.[0-9]+)+`)},
	{"a tracker entry by number", regexp.MustCompile(`(?i)\b(issues?|tickets?|sessions?)\s*\n\s*(//|#|\*)?\s*#?\s*[0-9]+\b`)},
}

// The detector finds each kind of outside reference, wrapped or not, and
// leaves alone what only looks like one: prices, versions, RFC sections and
// relative paths that stay inside the repository.
func TestAnOutsideReferenceIsFoundAndALookalikeIsNot(t *testing.T) {
	for _, tc := range []struct {
		rel, src string
		found    bool
	}{
		{"mk/x.mk", "# the cache ({issue} 12) keeps it", true},
		{"mk/x.mk", "# the cache ({issue}\n# 12) keeps it", true},
		{"docs/x.md", "as {issue} #7 asked", true},
		{"docs/x.md", "| approvals (spec 4.6) | built |", true},
		{"shared/x/x.go", "// Package x is the files group (spec\n// 4.2): files.", true},
		{"docs/x.md", "see section 5.4", true},
		{"docs/x.md", "| keys, privacy tiers (2.1, 2.2, 3, 5.1–5.3) | built |", true},
		{"docs/x.md", "| area (spec) | status |", true},
		{"shared/x/x.go", "rand.NewZipf(r, 1.1, 1, 1999); f(1.5, 2); names := make([]string, len(spec))", false},
		{"README.md", "specified by [the contract]({outside})", true},
		{"docs/x.md", "![shot](../../outside/shot.png)", true},
		{"shared/x/x.go", "// the request path of DESIGN.md", true},
		{"docs/x.md", "![shot](../shared/console/screenshot.png)", false},
		{"sdk/go/client.go", "//go:generate go run ./gen -in ../../shared/groups/public/publicapi/openapi.json", false},
		{"shared/x/x.go", "// rounded up (RFC 9110 §10.2.3)", false},
		{"docs/x.md", "the price (0.1) is held; `issues.balance` when short; TLS 1.2", false},
		{"docs/x.md", "from authentication on; `openapi-spec-validator` 0.7", false},
	} {
		// The references are spelled apart here so that this file, which
		// the repository's own check reads too, holds none of them.
		src := strings.NewReplacer("{issue}", "iss"+"ue", "{outside}", "../shared/CON"+"TRACT.md").Replace(tc.src)
		got := outsideReferences("/repo", tc.rel, src)
		if (len(got) > 0) != tc.found {
			t.Errorf("%s %q: found %v, want found=%v", tc.rel, src, got, tc.found)
		}
	}
}
