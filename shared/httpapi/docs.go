package httpapi

import (
	"bytes"
	"html/template"
	"sort"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
)

const apiDescription = `Call your account's managed services with an API key.

Authenticate with ` + "`Authorization: Bearer <API key>`" + `. Every error is ` + "`application/problem+json`" + ` with a stable ` + "`code`" + ` and the ` + "`requestId`" + ` of ` + "`X-Request-Id`" + `.
Lists take ` + "`?limit=`" + ` (1–100, default 20) and ` + "`?cursor=`" + ` and answer ` + "`{\"data\": [...], \"nextCursor\": \"...\" | null}`" + `.
Endpoints that answer 501 ` + "`not_implemented`" + ` are part of the contract but not built yet.`

type docOp struct {
	Method, Path, Summary, ID, Description string
}

// docsTemplate is parsed on first use: only the public function serves
// /docs, and every other function's cold start should not pay for it.
var docsTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("docs").Parse(docsPage))
})

const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code{background:#f3f3f3;padding:0 .2em}h2{border-bottom:1px solid #ddd;margin-top:2rem}
.op{margin:.6rem 0}.m{display:inline-block;width:4.5rem;font-weight:600}.d{color:#555;font-size:13px;margin-left:4.5rem;white-space:pre-wrap}</style></head>
<body><h1>{{.Title}}</h1><p>Machine-readable contract: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Base URL: <code>/v1</code>.</p>
{{range .Groups}}<h2>{{.Name}}</h2>{{range .Ops}}<div class="op"><span class="m">{{.Method}}</span><code>{{.Path}}</code> {{.Summary}} <small>({{.ID}})</small><div class="d">{{.Description}}</div></div>{{end}}{{end}}
</body></html>`

// renderDocs builds a self-contained reference page from the OpenAPI
// document (no scripts or CDN, so it works offline and behind strict CSPs).
func renderDocs(doc *huma.OpenAPI) []byte {
	groups := map[string][]docOp{}
	for path, item := range doc.Paths {
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete} {
			if op == nil {
				continue
			}
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
	var buf bytes.Buffer
	_ = docsTemplate().Execute(&buf, map[string]any{"Title": doc.Info.Title, "Groups": out})
	return buf.Bytes()
}
