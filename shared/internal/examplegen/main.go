// Command examplegen picks, for every request and response schema of the
// OpenAPI document, one real body of that schema from the exchanges the
// black-box tests captured (apitest.CaptureEnv), and writes them to the
// file the kernel embeds as the schemas' examples. Only bodies that
// validate against their schema are taken; every body that does not is
// reported, since it means the document and the server disagree.
//
//	go run ./shared/internal/examplegen -captured .cache/examples-capture -out shared/api/openapi_examples.json
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/api"
	"platformapi/shared/harness/apitest"
	"platformapi/shared/platform"
)

// maxItems bounds every list of an example: two items show the shape.
const maxItems = 2

type operation struct {
	path      []string
	request   string
	responses map[int]string
}

type candidate struct {
	value any
	score int
}

func main() {
	captured := flag.String("captured", ".cache/examples-capture", "directory of captured exchanges (*.jsonl)")
	out := flag.String("out", "shared/api/openapi_examples.json", "examples file to write")
	flag.Parse()
	if err := run(*captured, *out); err != nil {
		fmt.Fprintln(os.Stderr, "examplegen:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	k, err := platform.Empty()
	if err != nil {
		return err
	}
	doc := k.OpenAPI()
	reg := doc.Components.Schemas
	ops := map[string][]operation{}
	wanted := map[string]bool{}
	for path, item := range doc.Paths {
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete} {
			if op == nil {
				continue
			}
			o := operation{path: strings.Split(path, "/"), responses: map[int]string{}}
			if op.RequestBody != nil {
				if mt := op.RequestBody.Content["application/json"]; mt != nil && mt.Schema != nil {
					o.request = refName(mt.Schema.Ref)
					wanted[o.request] = true
				}
			}
			for status, r := range op.Responses {
				code, _ := strconv.Atoi(status)
				for ct, mt := range r.Content {
					if strings.Contains(ct, "json") && mt.Schema != nil && mt.Schema.Ref != "" {
						o.responses[code] = refName(mt.Schema.Ref)
						wanted[o.responses[code]] = true
					}
				}
			}
			ops[method] = append(ops[method], o)
		}
	}
	best := map[string]candidate{}
	rejected := map[string][]string{}
	consider := func(name string, raw json.RawMessage, mode huma.ValidateMode) {
		if name == "" || len(raw) == 0 {
			return
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return
		}
		v = trim(v)
		res := &huma.ValidateResult{}
		huma.Validate(reg, reg.Map()[name], huma.NewPathBuffer([]byte{}, 0), mode, v, res)
		if len(res.Errors) > 0 {
			rejected[name] = append(rejected[name], res.Errors[0].Error())
			return
		}
		if s := score(v); s > best[name].score {
			best[name] = candidate{v, s}
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no captured exchanges in %s (run the black-box tests with %s=%s)", dir, apitest.CaptureEnv, dir)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var x apitest.Exchange
			if json.Unmarshal(sc.Bytes(), &x) != nil {
				continue
			}
			o, ok := find(ops[x.Method], x.Path)
			if !ok {
				continue
			}
			if x.Status < 300 {
				consider(o.request, x.RequestBody, huma.ModeWriteToServer)
			}
			consider(o.responses[x.Status], x.ResponseBody, huma.ModeReadFromServer)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	examples := map[string]any{}
	var missing []string
	for name := range wanted {
		if c, ok := best[name]; ok {
			examples[name] = c.value
		} else {
			missing = append(missing, name)
		}
	}
	for name, errs := range rejected {
		fmt.Fprintf(os.Stderr, "%s: %d captured bodies do not match the schema, e.g. %s\n", name, len(errs), errs[0])
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "no captured body for: %s\n", strings.Join(missing, ", "))
	}
	b, err := json.MarshalIndent(examples, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d of %d schemas have an example\n", len(examples), len(wanted))
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

// find is the operation whose path template matches a captured path, with
// or without the /v1 prefix.
func find(ops []operation, path string) (operation, bool) {
	path = strings.TrimPrefix(path, "/"+api.APIVersion)
	parts := strings.Split(path, "/")
	var found operation
	literals := -1
next:
	for _, o := range ops {
		if len(o.path) != len(parts) {
			continue
		}
		n := 0
		for i, p := range o.path {
			switch {
			case strings.HasPrefix(p, "{"):
				if parts[i] == "" {
					continue next
				}
			case p != parts[i]:
				continue next
			default:
				n++
			}
		}
		// /approvals/service-actions is not /approvals/{approvalId}.
		if n > literals {
			found, literals = o, n
		}
	}
	return found, literals >= 0
}

func trim(v any) any {
	switch v := v.(type) {
	case []any:
		if len(v) > maxItems {
			v = v[:maxItems]
		}
		for i := range v {
			v[i] = trim(v[i])
		}
		return v
	case map[string]any:
		for k := range v {
			v[k] = trim(v[k])
		}
	}
	return v
}

// score prefers the body that shows the most: every field with a value.
func score(v any) int {
	switch v := v.(type) {
	case nil:
		return 0
	case []any:
		n := 1
		for _, x := range v {
			n += score(x)
		}
		return n
	case map[string]any:
		n := 1
		for _, x := range v {
			n += score(x)
		}
		return n
	}
	return 1
}
