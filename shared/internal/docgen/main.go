// Command docgen writes the parts of docs/ that are lists of something the
// code already declares: the route table (shared/base/routes), the webhook event
// catalogue (shared/groups/webhooks) and the environment variables the processes
// read. A page holds a part between the lines
//
//	<!-- generated:NAME (go run ./shared/internal/docgen) -->
//	<!-- end generated:NAME -->
//
// and docgen rewrites what lies between them, so a page keeps its prose and
// the list cannot drift from its source: `make docs-gen` writes the pages,
// `make docs-gen-check` (in `make test`) writes them to .cache and diffs.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	out := flag.String("out", "", "where to write the pages (default <root>/docs)")
	flag.Parse()
	if *out == "" {
		*out = filepath.Join(*root, "docs")
	}
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

// fragments are the generated parts by name; each must appear in exactly
// one page, so removing its markers fails instead of silently dropping it.
func fragments(root string) (map[string]string, error) {
	env, err := envFragment(root)
	if err != nil {
		return nil, err
	}
	return map[string]string{"routes": routesFragment(), "events": eventsFragment(), "env": env}, nil
}

var marker = regexp.MustCompile(`(?m)^<!-- generated:([a-z]+) [^\n]*-->\n`)

func run(root, out string) error {
	frags, err := fragments(root)
	if err != nil {
		return err
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	used := map[string]string{}
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			return err
		}
		res, names, err := fill(src, frags)
		if err != nil {
			return fmt.Errorf("%s: %w", page, err)
		}
		for _, n := range names {
			if prev, dup := used[n]; dup {
				return fmt.Errorf("generated:%s is in both %s and %s", n, prev, page)
			}
			used[n] = page
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(page)), res, 0o644); err != nil {
			return err
		}
	}
	for n := range frags {
		if _, ok := used[n]; !ok {
			return fmt.Errorf("no page under docs/ holds <!-- generated:%s ... -->", n)
		}
	}
	return nil
}

// fill replaces the body of every marked part of src with its fragment.
func fill(src []byte, frags map[string]string) ([]byte, []string, error) {
	var b bytes.Buffer
	var names []string
	for {
		loc := marker.FindSubmatchIndex(src)
		if loc == nil {
			b.Write(src)
			return b.Bytes(), names, nil
		}
		name := string(src[loc[2]:loc[3]])
		frag, ok := frags[name]
		if !ok {
			return nil, nil, fmt.Errorf("unknown generated part %q", name)
		}
		end := []byte("<!-- end generated:" + name + " -->\n")
		stop := bytes.Index(src[loc[1]:], end)
		if stop < 0 {
			return nil, nil, fmt.Errorf("generated:%s has no %q line", name, strings.TrimSpace(string(end)))
		}
		b.Write(src[:loc[1]])
		b.WriteString(frag)
		b.Write(end)
		src = src[loc[1]+stop+len(end):]
		names = append(names, name)
	}
}

// cell escapes what would break a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
