package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// methodNames keep the Client's method names from before its methods were
// generated, where the rule (methodName) would name them otherwise: a
// renamed method would break its callers. A new operation needs none.
var methodNames = map[string]string{
	"index.read": "Index", "health.read": "Health", "openapi.read": "OpenAPI", "pricing.read": "Pricing",
	"docs.read": "Docs", "docs.assets.read": "DocsAsset",
	"capabilities.list.byService": "ListServiceCapabilities", "services.invoke": "Invoke",
	"credits.balance.read": "Balance", "credits.x402.topUp": "TopUp", "credits.ledger.list": "ListLedger",
	"usage.read": "Usage", "files.create": "UploadFile", "files.content.read": "DownloadFile",
	"databases.account.read": "GetDatabase", "databases.account.provision": "ProvisionDatabase",
	"databases.account.deprovision": "DeprovisionDatabase", "databases.actions": "DatabaseActions",
	"databases.transfers.create": "CreateTransfer", "databases.transfers.part.upload": "UploadTransferPart",
	"databases.transfers.complete": "CompleteTransfer", "databases.transfers.archive": "DownloadTransferArchive",
	"databases.transfers.read": "GetTransfer", "databases.transfers.cancel": "CancelTransfer",
	"wallets.balances.read": "WalletBalances", "wallets.signatures.quote": "QuoteSignature", "wallets.signatures.create": "CreateSignature",
	"trading.orders.create": "CreateOrder", "trading.orders.list": "ListOrders", "trading.orders.read": "GetOrder",
	"trading.positions.list": "ListPositions",
	"artifacts.content.read": "DownloadArtifact", "webhooks.rotate": "RotateWebhookSecret",
}

// transportOnly are operations of the document that are no SDK call: /mcp
// is the MCP transport, spoken by MCP clients.
var transportOnly = map[string]bool{"mcp": true}

// byValue are the answer types a method returns as values, as the Client
// did before its methods were generated; any other object is answered by
// pointer.
var byValue = map[string]bool{
	"IndexBody": true, "HealthStatus": true, "CreatedKey": true, "RolledKey": true, "Service": true, "Capability": true,
	"Action": true, "Invocation": true, "Balance": true, "LedgerEntry": true, "UsageBucket": true, "Event": true,
	"Deleted": true, "TransferPart": true, "Positions": true, "TokenView": true, "WebhookWithSecret": true,
	"PricingBody": true, "json.RawMessage": true,
}

// methodName is the Client method of an operation id: its verb (the last
// word; read is Get) then its nouns, singular but for a list's last one:
// "wallets.transactions.read" is GetWalletTransaction, "projects.list"
// ListProjects.
func methodName(id string) string {
	if n, ok := methodNames[id]; ok {
		return n
	}
	words := strings.Split(id, ".")
	verb, nouns := words[len(words)-1], words[:len(words)-1]
	var b strings.Builder
	switch verb {
	case "read":
		b.WriteString("Get")
	default:
		b.WriteString(fieldName(verb))
	}
	for i, n := range nouns {
		if verb != "list" || i < len(nouns)-1 {
			n = singular(n)
		}
		b.WriteString(fieldName(n))
	}
	return b.String()
}

func singular(w string) string {
	switch {
	case strings.HasSuffix(w, "ies"):
		return strings.TrimSuffix(w, "ies") + "y"
	case strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "sses"):
		return strings.TrimSuffix(w, "es")
	case strings.HasSuffix(w, "ss"):
		return w
	}
	return strings.TrimSuffix(w, "s")
}

// argName is the Go parameter name of a path parameter: "projectId" is
// projectID, "id" id.
func argName(param string) string {
	if _, ok := initialisms[strings.ToLower(param)]; ok {
		return strings.ToLower(param)
	}
	r := []rune(fieldName(param))
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// handWritten are the Client's methods written by hand in the package in
// dir (outside its generated and test files): the generator leaves those
// operations to them.
func handWritten(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "zz_") || strings.HasSuffix(base, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name == "Client" {
					out[fn.Name.Name] = true
				}
			}
		}
	}
	return out, nil
}

type fullParam struct {
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
	Schema   *struct {
		Type string `json:"type"`
	} `json:"schema"`
}

type fullOperation struct {
	OperationID string      `json:"operationId"`
	Summary     string      `json:"summary"`
	Parameters  []fullParam `json:"parameters"`
	RequestBody *struct {
		Content map[string]media `json:"content"`
	} `json:"requestBody"`
}

// answer is how a method answers a type: by value or by pointer.
func answer(t string) string {
	if byValue[t] || !isNamed(t) {
		return t
	}
	return "*" + t
}

// isNamed reports whether t is a type of the document rather than a
// builtin or a composite.
func isNamed(t string) bool {
	return t != "" && unicode.IsUpper(rune(t[0])) && !strings.ContainsAny(t, "[].")
}

// clientMethods writes the Client's method of every operation of the document
// that no hand-written method performs, a pager (All...) beside each list,
// and Operations, the method of every operation. An operation it cannot
// express (a raw body, a query parameter beyond the page's, a path
// parameter that is no string) fails the generation: its method is then
// written by hand, with a doc comment saying why.
func clientMethods(doc *document, dir string) ([]byte, error) {
	byHand, err := handWritten(dir)
	if err != nil {
		return nil, err
	}
	g := &generator{doc: doc, patch: map[string]bool{}, inline: map[string]*schema{}, imports: map[string]bool{}}
	rts, err := g.routes()
	if err != nil {
		return nil, err
	}
	ops := map[string]fullOperation{}
	for path, item := range doc.Paths {
		for _, m := range methods {
			if raw, ok := item[m]; ok {
				var op fullOperation
				if err := json.Unmarshal(raw, &op); err != nil {
					return nil, fmt.Errorf("%s %s: %w", m, path, err)
				}
				ops[op.OperationID] = op
			}
		}
	}
	var body bytes.Buffer
	names := map[string]string{}
	usesIter := false
	for _, r := range rts {
		if transportOnly[r.id] {
			continue
		}
		name := methodName(r.id)
		names[r.id] = name
		if byHand[name] {
			continue
		}
		op := ops[r.id]
		var args, params []string
		for _, p := range op.Parameters {
			switch {
			case p.In == "path":
				if p.Schema == nil || p.Schema.Type != "string" {
					return nil, fmt.Errorf("%s: path parameter %s is no string: write %s by hand", r.id, p.Name, name)
				}
				args = append(args, argName(p.Name)+" string")
				params = append(params, fmt.Sprintf("%q: %s", p.Name, argName(p.Name)))
			case p.In == "query" && (p.Name == "cursor" || p.Name == "limit"):
			case p.In == "query":
				return nil, fmt.Errorf("%s: query parameter %s: write %s by hand", r.id, p.Name, name)
			}
		}
		paramsExpr := "nil"
		if len(params) > 0 {
			paramsExpr = "map[string]string{" + strings.Join(params, ", ") + "}"
		}
		reqExpr := "nil"
		switch {
		case r.request == "":
		case r.request == "stream":
			return nil, fmt.Errorf("%s: a raw request body: write %s by hand", r.id, name)
		case g.emptyBody(op):
			reqExpr = "struct{}{}"
		default:
			args = append(args, "req "+r.request)
			reqExpr = "req"
		}
		summary := strings.TrimSuffix(strings.Join(strings.Fields(op.Summary), " "), ".")
		fmt.Fprintf(&body, "// %s is %s %s: %s.\n", name, r.method, r.path, summary)
		sig := strings.Join(append([]string{"ctx context.Context"}, args...), ", ")
		switch {
		case r.response == "stream":
			fmt.Fprintf(&body, "func (c *Client) %s(%s, opts ...CallOption) (Result[*Download], error) {\n", name, sig)
			if reqExpr != "nil" {
				return nil, fmt.Errorf("%s: a body and a streamed answer: write %s by hand", r.id, name)
			}
			fmt.Fprintf(&body, "\treturn stream(ctx, c, c.newCall(%q, %s, opts))\n}\n\n", r.id, paramsExpr)
		case strings.HasPrefix(r.response, "Page["):
			elem := answer(strings.TrimSuffix(strings.TrimPrefix(r.response, "Page["), "]"))
			fmt.Fprintf(&body, "func (c *Client) %s(%s, o ListOptions, opts ...CallOption) (Result[Page[%s]], error) {\n", name, sig, elem)
			fmt.Fprintf(&body, "\treturn list[%s](ctx, c, %q, %s, o, nil, opts)\n}\n\n", elem, r.id, paramsExpr)
			if all := "All" + strings.TrimPrefix(name, "List"); strings.HasPrefix(name, "List") && !byHand[all] {
				usesIter = true
				var call []string
				for _, a := range args {
					call = append(call, strings.Fields(a)[0])
				}
				fmt.Fprintf(&body, "// %s iterates every page of %s, from o.Cursor to the end.\n", all, name)
				fmt.Fprintf(&body, "func (c *Client) %s(%s, o ListOptions, opts ...CallOption) iter.Seq2[%s, error] {\n", all, sig, elem)
				if len(call) == 0 {
					fmt.Fprintf(&body, "\treturn Each(ctx, o, c.%s, opts...)\n}\n\n", name)
				} else {
					fmt.Fprintf(&body, "\treturn Each(ctx, o, func(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[%s]], error) {\n", elem)
					fmt.Fprintf(&body, "\t\treturn c.%s(ctx, %s, o, opts...)\n\t}, opts...)\n}\n\n", name, strings.Join(call, ", "))
				}
			}
		case r.response == "":
			return nil, fmt.Errorf("%s: no success body: write %s by hand", r.id, name)
		default:
			t := answer(r.response)
			fmt.Fprintf(&body, "func (c *Client) %s(%s, opts ...CallOption) (Result[%s], error) {\n", name, sig, t)
			fmt.Fprintf(&body, "\treturn jsonCall[%s](ctx, c, %q, %s, nil, %s, opts)\n}\n\n", t, r.id, paramsExpr, reqExpr)
		}
	}
	var out bytes.Buffer
	out.WriteString("// Code generated by internal/gen from shared/groups/public/publicapi/openapi.json. DO NOT EDIT.\n\npackage platform\n\n")
	out.WriteString("import (\n\t\"context\"\n")
	if bytes.Contains(body.Bytes(), []byte("json.")) {
		out.WriteString("\t\"encoding/json\"\n")
	}
	if usesIter {
		out.WriteString("\t\"iter\"\n")
	}
	out.WriteString(")\n\n")
	out.WriteString("// Operations maps every operation id of the document (but /mcp, the MCP\n" +
		"// transport) to the Client method that performs it; the coverage test\n" +
		"// holds each method to the operation's types.\n")
	out.WriteString("var Operations = map[string]string{\n")
	for _, id := range slices.Sorted(maps.Keys(names)) {
		fmt.Fprintf(&out, "\t%q: %q,\n", id, names[id])
	}
	out.WriteString("}\n\n")
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated methods do not parse: %w\n%s", err, out.Bytes())
	}
	return src, nil
}

// emptyBody reports whether op's JSON body is an object without
// properties: its method sends {} and takes no argument for it.
func (g *generator) emptyBody(op fullOperation) bool {
	if op.RequestBody == nil {
		return false
	}
	m, ok := op.RequestBody.Content["application/json"]
	if !ok || m.Schema == nil || m.Schema.Ref == "" {
		return false
	}
	s := g.doc.Components.Schemas[refName(m.Schema.Ref)]
	return s != nil && len(s.Properties) == 0
}

func writeMethods(doc *document, dir, out string) error {
	src, err := clientMethods(doc, dir)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
