package publicapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"sort"
	"strings"
)

type docOp struct {
	Method, Path, Summary, ID, Description string
}

// The page is written with html.EscapeString rather than html/template:
// the template engine's reflection keeps every method of every type in the
// binary, which would grow the public function by a third.
const (
	pageHead = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%[1]s</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code{background:#f3f3f3;padding:0 .2em}h2{border-bottom:1px solid #ddd;margin-top:2rem}
.op{margin:.6rem 0}.m{display:inline-block;width:4.5rem;font-weight:600}.d{color:#555;font-size:13px;margin-left:4.5rem;white-space:pre-wrap}</style></head>
<body><h1>%[1]s</h1><p>Machine-readable contract: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Base URL: <code>/v1</code>.</p>
`
	pageGroup = "<h2>%s</h2>"
	pageOp    = `<div class="op"><span class="m">%s</span><code>%s</code> %s <small>(%s)</small><div class="d">%s</div></div>`
	pageFoot  = "\n</body></html>"
)

// document is the part of the OpenAPI document the page shows.
type document struct {
	Info struct {
		Title string `json:"title"`
	} `json:"info"`
	Paths map[string]map[string]json.RawMessage `json:"paths"`
}

type docOperation struct {
	OperationID string   `json:"operationId"`
	Summary     string   `json:"summary"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// renderDocs builds a self-contained reference page from the OpenAPI
// document (no scripts or CDN, so it works offline and behind strict CSPs).
func renderDocs(raw []byte) []byte {
	var doc document
	_ = json.Unmarshal(raw, &doc) // the embedded document is tested to be valid
	groups := map[string][]docOp{}
	for path, item := range doc.Paths {
		for method, raw := range item {
			var op docOperation
			if method == "parameters" || json.Unmarshal(raw, &op) != nil {
				continue
			}
			method = strings.ToUpper(method)
			tag := "other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			desc, _, _ := strings.Cut(op.Description, "\n\nChecks, in order")
			groups[tag] = append(groups[tag], docOp{Method: method, Path: path, Summary: op.Summary, ID: op.OperationID, Description: desc})
		}
	}
	type group struct {
		Name string
		Ops  []docOp
	}
	var out []group
	for name, ops := range groups {
		sort.Slice(ops, func(i, j int) bool { return ops[i].Path+ops[i].Method < ops[j].Path+ops[j].Method })
		out = append(out, group{Name: name, Ops: ops})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	esc := html.EscapeString
	var buf bytes.Buffer
	fmt.Fprintf(&buf, pageHead, esc(doc.Info.Title))
	for _, g := range out {
		fmt.Fprintf(&buf, pageGroup, esc(g.Name))
		for _, op := range g.Ops {
			fmt.Fprintf(&buf, pageOp, esc(op.Method), esc(op.Path), esc(op.Summary), esc(op.ID), esc(op.Description))
		}
	}
	buf.WriteString(pageFoot)
	return buf.Bytes()
}
