package api

import (
	"strings"
	"unicode"

	"platformapi/shared/base/routes"
)

// codeSample is one entry of the x-codeSamples extension (Redoc's and
// Scalar's vendor extension for example requests).
type codeSample struct {
	Lang   string `json:"lang"`
	Label  string `json:"label"`
	Source string `json:"source"`
}

// codeSamples writes a route's example request in curl, Go and TypeScript
// from its policy: method, path, bearer key, Idempotency-Key when the
// route needs one, and the body it takes. Go and TypeScript use their
// standard library (net/http, fetch), which is exactly what goes over the
// wire and stays true whatever the SDKs name their methods.
func codeSamples(rt routes.Route) []codeSample {
	return []codeSample{
		{Lang: "Shell", Label: "curl", Source: curlSample(rt)},
		{Lang: "Go", Label: "Go (net/http)", Source: goSample(rt)},
		{Lang: "TypeScript", Label: "TypeScript (fetch)", Source: tsSample(rt)},
	}
}

// contentType is the media type a sample sends, "" for no body.
func contentType(rt routes.Route) string {
	switch rt.Body {
	case routes.BodyJSON:
		return "application/json"
	case routes.BodyZip:
		return "application/zip"
	case routes.BodyRaw:
		return "text/csv"
	}
	return ""
}

func authenticated(rt routes.Route) bool { return rt.Group != "public" }

// mcpAccept is the Accept header the Streamable HTTP transport requires of
// every POST, even when it answers JSON.
const mcpAccept = "application/json, text/event-stream"

func isMCP(rt routes.Route) bool { return rt.ID == routes.MCP.ID }

func curlSample(rt routes.Route) string {
	path := replaceParams(rt.Path, func(p string) string { return "$" + envName(p) })
	var b strings.Builder
	if rt.Body == routes.BodyJSON {
		b.WriteString("# request.json holds the request body (see its schema)\n")
	}
	b.WriteString("curl")
	if rt.Method != "GET" {
		b.WriteString(" -X " + rt.Method)
	}
	b.WriteString(` "$BASE_URL/` + APIVersion + path + `"`)
	if authenticated(rt) {
		b.WriteString(" \\\n  -H \"Authorization: Bearer $API_KEY\"")
	}
	if rt.Idem {
		b.WriteString(" \\\n  -H \"Idempotency-Key: $(uuidgen)\"")
	}
	if ct := contentType(rt); ct != "" {
		b.WriteString(" \\\n  -H \"Content-Type: " + ct + "\"")
	}
	if isMCP(rt) {
		b.WriteString(" \\\n  -H \"Accept: " + mcpAccept + "\"")
	}
	if rt.Body == routes.BodyRaw {
		b.WriteString(" \\\n  -H \"X-File-Name: report.csv\"")
	}
	switch rt.Body {
	case routes.BodyJSON:
		b.WriteString(" \\\n  --data @request.json")
	case routes.BodyZip:
		b.WriteString(" \\\n  --data-binary @part.zip")
	case routes.BodyRaw:
		b.WriteString(" \\\n  --data-binary @report.csv")
	}
	return b.String()
}

func goSample(rt routes.Route) string {
	path := `"/` + APIVersion + replaceParams(rt.Path, func(p string) string { return `"+` + goName(p) + `+"` }) + `"`
	path = strings.TrimSuffix(path, `+""`)
	body := "nil"
	var b strings.Builder
	switch rt.Body {
	case routes.BodyJSON:
		b.WriteString("body, err := json.Marshal(request) // the request body (see its schema)\nif err != nil {\n\treturn err\n}\n")
		body = "bytes.NewReader(body)"
	case routes.BodyRaw, routes.BodyZip:
		b.WriteString("content, err := os.Open(name)\nif err != nil {\n\treturn err\n}\ndefer content.Close()\n")
		body = "content"
	}
	b.WriteString("req, err := http.NewRequestWithContext(ctx, \"" + rt.Method + "\", baseURL+" + path + ", " + body + ")\nif err != nil {\n\treturn err\n}\n")
	if authenticated(rt) {
		b.WriteString("req.Header.Set(\"Authorization\", \"Bearer \"+apiKey)\n")
	}
	if rt.Idem {
		b.WriteString("req.Header.Set(\"Idempotency-Key\", idempotencyKey) // one per logical call, the same on every retry\n")
	}
	if ct := contentType(rt); ct != "" {
		b.WriteString("req.Header.Set(\"Content-Type\", \"" + ct + "\")\n")
	}
	if isMCP(rt) {
		b.WriteString("req.Header.Set(\"Accept\", \"" + mcpAccept + "\")\n")
	}
	if rt.Body == routes.BodyRaw {
		b.WriteString("req.Header.Set(\"X-File-Name\", \"report.csv\")\n")
	}
	b.WriteString("res, err := http.DefaultClient.Do(req)\nif err != nil {\n\treturn err\n}\ndefer res.Body.Close()")
	return b.String()
}

func tsSample(rt routes.Route) string {
	path := "/" + APIVersion + replaceParams(rt.Path, func(p string) string { return "${" + p + "}" })
	var headers []string
	if authenticated(rt) {
		headers = append(headers, "Authorization: `Bearer ${apiKey}`,")
	}
	if rt.Idem {
		headers = append(headers, `"Idempotency-Key": idempotencyKey, // crypto.randomUUID() once per logical call, reused on retries`)
	}
	if ct := contentType(rt); ct != "" {
		headers = append(headers, `"Content-Type": "`+ct+`",`)
	}
	if isMCP(rt) {
		headers = append(headers, `Accept: "`+mcpAccept+`",`)
	}
	if rt.Body == routes.BodyRaw {
		headers = append(headers, `"X-File-Name": "report.csv",`)
	}
	var b strings.Builder
	b.WriteString("const res = await fetch(`${baseUrl}" + path + "`, {\n  method: \"" + rt.Method + "\",\n")
	if len(headers) > 0 {
		b.WriteString("  headers: {\n    " + strings.Join(headers, "\n    ") + "\n  },\n")
	}
	switch rt.Body {
	case routes.BodyJSON:
		b.WriteString("  body: JSON.stringify(request), // the request body (see its schema)\n")
	case routes.BodyRaw, routes.BodyZip:
		b.WriteString("  body: content, // a Blob, Buffer or stream of the bytes\n")
	}
	b.WriteString("});\nconst result = await res.json();")
	return b.String()
}

// replaceParams rewrites each {param} of a path.
func replaceParams(path string, to func(param string) string) string {
	return pathParamRE.ReplaceAllStringFunc(path, func(m string) string { return to(m[1 : len(m)-1]) })
}

// goName spells a path parameter as Go does: projectId → projectID.
func goName(param string) string {
	if base, ok := strings.CutSuffix(param, "Id"); ok {
		return base + "ID"
	}
	return param
}

// envName turns a path parameter into a shell variable: projectId → PROJECT_ID.
func envName(param string) string {
	var b strings.Builder
	for i, r := range param {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
