// Command gen writes the SDK's wire types and route table, and the Client's
// methods, from the OpenAPI document the server publishes, so the SDK needs
// none of the server's packages (and none of their dependencies) to speak
// the API, and a new operation needs no hand-written method:
//
//	go run ./internal/gen -in ../../shared/groups/public/publicapi/openapi.json -out zz_generated.go -methods zz_operations.go
//
// A method the package already declares by hand (a raw body, filters,
// top-up's payment, a download answered otherwise) is not generated
// (methods.go).
//
// Mapping, chosen so that a value means on the wire what it says in Go:
//   - number is json.Number: credits and amounts are exact decimals, never
//     rounded through a float64; integer is int64; date-time is time.Time;
//     a property without a type (or a oneOf) is json.RawMessage.
//   - A nullable property is a pointer (a slice or map is nil instead).
//   - A property that is an object ($ref) is a pointer: the document cannot
//     mark a $ref nullable, and the server sends null for some.
//   - An optional boolean, number or integer is a pointer, since its zero
//     value is a real value; an optional string, time, slice or map is
//     omitted when zero (omitzero: a nil slice is absent, an empty one is []).
//     In a PATCH body every optional scalar is a pointer: absent keeps.
//   - Page<T> schemas become the generic Page[T]; Error is APIError.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"log"
	"maps"
	"os"
	"slices"
	"strings"
	"unicode"
)

// rename keeps the SDK's names (from before the types were generated) where
// the document's differ, so callers' code keeps compiling.
var rename = map[string]string{
	"HealthBody":           "HealthStatus",
	"BalanceBody":          "Balance",
	"EntryView":            "LedgerEntry",
	"PartResult":           "TransferPart",
	"PositionList":         "Positions",
	"CreateRunRequest":     "RunCreate",
	"ApprovalRequest":      "ApprovalCreate",
	"Decision":             "ApprovalDecision",
	"WebhookCreateBody":    "WebhookCreate",
	"WebhookUpdateBody":    "WebhookUpdate",
	"ConnectionCreateBody": "ConnectionCreate",
	"ConnectionUpdateBody": "ConnectionUpdate",
	"PrepareRequest":       "SwapPrepare",
	"ServiceView":          "Service",
	"InvokeResult":         "Invocation",
}

// skip lists schemas the SDK writes by hand: Error is APIError (it also
// carries Retry-After and the headers).
var skip = map[string]bool{"Error": true}

// initialisms are written in capitals in Go names.
var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "url": "URL", "urls": "URLs", "ip": "IP", "ips": "IPs", "api": "API",
	"usd": "USD", "sha256": "SHA256", "json": "JSON", "http": "HTTP", "sql": "SQL", "uri": "URI",
	"openapi": "OpenAPI", "jsonrpc": "JSONRPC",
}

type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 json.RawMessage    `json:"type"`
	Format               string             `json:"format"`
	Description          string             `json:"description"`
	Enum                 []any              `json:"enum"`
	Items                *schema            `json:"items"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	OneOf                []*schema          `json:"oneOf"`
	AnyOf                []*schema          `json:"anyOf"`
	AllOf                []*schema          `json:"allOf"`
}

// types returns the schema's types without "null", and whether null is one.
func (s *schema) types() ([]string, bool) {
	if len(s.Type) == 0 {
		return nil, false
	}
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return []string{one}, false
	}
	var many []string
	if err := json.Unmarshal(s.Type, &many); err != nil {
		log.Fatalf("type %s: %v", s.Type, err)
	}
	null := slices.Contains(many, "null")
	return slices.DeleteFunc(many, func(t string) bool { return t == "null" }), null
}

// nullableOf unwraps anyOf/oneOf [X, {type: null}], the way OpenAPI 3.1
// marks a $ref nullable.
func (s *schema) nullableOf() (*schema, bool) {
	for _, alts := range [][]*schema{s.AnyOf, s.OneOf} {
		if len(alts) != 2 {
			continue
		}
		for i, alt := range alts {
			if string(alt.Type) == `"null"` {
				return alts[1-i], true
			}
		}
	}
	return nil, false
}

type parameter struct {
	Ref      string `json:"$ref"`
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
}

type media struct {
	Schema *schema `json:"schema"`
}

type operation struct {
	OperationID string      `json:"operationId"`
	Parameters  []parameter `json:"parameters"`
	RequestBody *struct {
		Content map[string]media `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]media `json:"content"`
	} `json:"responses"`
}

type document struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

var methods = []string{"get", "put", "post", "delete", "patch", "head", "options"}

func main() {
	in := flag.String("in", "../../shared/groups/public/publicapi/openapi.json", "the OpenAPI document")
	out := flag.String("out", "zz_generated.go", "the Go file to write")
	methodsOut := flag.String("methods", "", "the Go file to write the Client's methods to (none when empty)")
	dir := flag.String("dir", ".", "the SDK package, whose hand-written methods are not generated")
	flag.Parse()
	raw, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	var doc document
	if err := json.Unmarshal(raw, &doc); err != nil {
		log.Fatalf("%s: %v", *in, err)
	}
	src, err := generate(&doc)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
	if *methodsOut != "" {
		if err := writeMethods(&doc, *dir, *methodsOut); err != nil {
			log.Fatal(err)
		}
	}
}

func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

// typeName is the Go name of a component schema.
func typeName(name string) string {
	if n, ok := rename[name]; ok {
		return n
	}
	return name
}

// pageOf reports the element schema of a Page<T> schema: {data: [T], nextCursor}.
func pageOf(name string, s *schema) (string, bool) {
	if !strings.HasPrefix(name, "Page") || len(s.Properties) != 2 || s.Properties["nextCursor"] == nil {
		return "", false
	}
	data := s.Properties["data"]
	if data == nil || data.Items == nil || data.Items.Ref == "" {
		return "", false
	}
	return refName(data.Items.Ref), true
}

// fieldName is the exported Go name of a JSON property name.
func fieldName(prop string) string {
	var words []string
	start := 0
	for i := 1; i <= len(prop); i++ {
		if i == len(prop) || unicode.IsUpper(rune(prop[i])) && !unicode.IsUpper(rune(prop[i-1])) || prop[i] == '_' || prop[i] == '-' {
			words = append(words, strings.Trim(prop[start:i], "_-"))
			start = i
		}
	}
	var b strings.Builder
	for _, w := range words {
		if w == "" {
			continue
		}
		if up, ok := initialisms[strings.ToLower(w)]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

type generator struct {
	doc     *document
	patch   map[string]bool    // schemas that are PATCH bodies
	inline  map[string]*schema // inline objects, named after their property
	buf     bytes.Buffer
	imports map[string]bool
}

// goType is the Go type of s, ignoring whether it is nullable or optional;
// an inline object with properties becomes the struct type named hint.
func (g *generator) goType(s *schema, hint string) (string, error) {
	if inner, ok := s.nullableOf(); ok {
		return g.goType(inner, hint)
	}
	if s.Ref != "" {
		name := refName(s.Ref)
		target := g.doc.Components.Schemas[name]
		if target == nil {
			return "", fmt.Errorf("dangling $ref %s", s.Ref)
		}
		if elem, ok := pageOf(name, target); ok {
			return "Page[" + typeName(elem) + "]", nil
		}
		return typeName(name), nil
	}
	types, _ := s.types()
	if len(s.OneOf)+len(s.AnyOf)+len(s.AllOf) > 0 || len(types) != 1 {
		g.imports["encoding/json"] = true
		return "json.RawMessage", nil
	}
	switch types[0] {
	case "string":
		if s.Format == "date-time" {
			g.imports["time"] = true
			return "time.Time", nil
		}
		return "string", nil
	case "integer":
		return "int64", nil
	case "number":
		g.imports["encoding/json"] = true
		return "json.Number", nil
	case "boolean":
		return "bool", nil
	case "array":
		if s.Items == nil {
			g.imports["encoding/json"] = true
			return "[]json.RawMessage", nil
		}
		elem, err := g.goType(s.Items, hint+"Item")
		return "[]" + elem, err
	case "object":
		if len(s.Properties) > 0 {
			if g.doc.Components.Schemas[hint] != nil || g.inline[hint] != nil {
				return "", fmt.Errorf("inline object %s: the name is taken", hint)
			}
			g.inline[hint] = s
			return hint, nil
		}
		var add schema
		if len(s.AdditionalProperties) > 0 && json.Unmarshal(s.AdditionalProperties, &add) == nil && (add.Ref != "" || len(add.Type) > 0) {
			elem, err := g.goType(&add, hint+"Value")
			return "map[string]" + elem, err
		}
	}
	g.imports["encoding/json"] = true
	return "json.RawMessage", nil
}

// field writes one property of a struct.
func (g *generator) field(owner, prop string, s *schema, required bool) error {
	t, err := g.goType(s, owner+fieldName(prop))
	if err != nil {
		return fmt.Errorf("%s.%s: %w", owner, prop, err)
	}
	_, nullable := s.types()
	if _, ok := s.nullableOf(); ok {
		nullable = true
	}
	reference := strings.HasPrefix(t, "[]") || strings.HasPrefix(t, "map[") || t == "json.RawMessage"
	scalar := t == "bool" || t == "int64" || t == "json.Number"
	textual := t == "string" || t == "time.Time"
	object := !reference && !scalar && !textual
	tag := prop
	switch {
	case reference:
		if !required {
			tag += ",omitzero"
		}
	case object:
		// A pointer even when required: the document cannot say that a
		// $ref is nullable, and the server sends null for some.
		t = "*" + t
		if !required {
			tag += ",omitempty"
		}
	case nullable:
		t = "*" + t
		if !required {
			tag += ",omitempty"
		}
	case required:
	case scalar || g.patch[owner]:
		t, tag = "*"+t, tag+",omitempty"
	default:
		tag += ",omitzero"
	}
	if doc := comment(s); doc != "" {
		fmt.Fprintf(&g.buf, "\t// %s\n", doc)
	}
	fmt.Fprintf(&g.buf, "\t%s %s `json:%q`\n", fieldName(prop), t, tag)
	return nil
}

// comment is a property's description and enumeration, on one line.
func comment(s *schema) string {
	d := strings.Join(strings.Fields(s.Description), " ")
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = fmt.Sprint(v)
		}
		if d != "" {
			d += ". "
		}
		d += "One of: " + strings.Join(vals, ", ") + "."
	}
	return d
}

func (g *generator) schemaType(name string, s *schema) error {
	goName := typeName(name)
	if d := comment(s); g.inline[name] != nil {
		fmt.Fprintf(&g.buf, "// %s is an object inline in the OpenAPI document. %s\n", goName, d)
	} else if d != "" {
		fmt.Fprintf(&g.buf, "// %s is %s: %s\n", goName, name, d)
	} else {
		fmt.Fprintf(&g.buf, "// %s is the schema %s of the OpenAPI document.\n", goName, name)
	}
	types, _ := s.types()
	if len(s.Properties) == 0 && !(len(types) == 1 && types[0] == "object") {
		t, err := g.goType(s, goName+"Value")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(&g.buf, "type %s %s\n\n", goName, t)
		return nil
	}
	if len(s.Properties) == 0 {
		fmt.Fprintf(&g.buf, "type %s struct{}\n\n", goName)
		return nil
	}
	fmt.Fprintf(&g.buf, "type %s struct {\n", goName)
	for _, prop := range slices.Sorted(maps.Keys(s.Properties)) {
		if err := g.field(name, prop, s.Properties[prop], slices.Contains(s.Required, prop)); err != nil {
			return err
		}
	}
	g.buf.WriteString("}\n\n")
	return nil
}

type route struct {
	id, method, path  string
	idem              bool
	request, response string
}

// routes is every operation of the document: what a call needs at run time
// (method, path, Idempotency-Key) and its body and answer types, which the
// coverage test holds the Client's methods to.
func (g *generator) routes() ([]route, error) {
	var out []route
	for _, path := range slices.Sorted(maps.Keys(g.doc.Paths)) {
		item := g.doc.Paths[path]
		for _, m := range methods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op operation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, path, err)
			}
			if op.OperationID == "" {
				return nil, fmt.Errorf("%s %s has no operationId", m, path)
			}
			r := route{id: op.OperationID, method: strings.ToUpper(m), path: path}
			for _, p := range op.Parameters {
				if p.In == "header" && p.Name == "Idempotency-Key" && p.Required {
					r.idem = true
				}
			}
			if op.RequestBody != nil {
				r.request = g.bodyType(op.RequestBody.Content)
			}
			for _, code := range slices.Sorted(maps.Keys(op.Responses)) {
				if strings.HasPrefix(code, "2") {
					r.response = g.bodyType(op.Responses[code].Content)
					break
				}
			}
			if m == "patch" && op.RequestBody != nil {
				if s := op.RequestBody.Content["application/json"].Schema; s != nil && s.Ref != "" {
					g.patch[refName(s.Ref)] = true
				}
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b route) int { return strings.Compare(a.id, b.id) })
	return out, nil
}

// bodyType names a JSON body's Go type, "" for none and "stream" for any
// other media type.
func (g *generator) bodyType(content map[string]media) string {
	if len(content) == 0 {
		return ""
	}
	for ct, m := range content {
		if (ct == "application/json" || strings.HasSuffix(ct, "+json")) && m.Schema != nil {
			if m.Schema.Ref == "" {
				// An inline body is not a type of the SDK: raw JSON.
				return "json.RawMessage"
			}
			t, err := g.goType(m.Schema, "")
			if err != nil {
				return "json.RawMessage"
			}
			return t
		}
	}
	return "stream"
}

func generate(doc *document) ([]byte, error) {
	g := &generator{doc: doc, patch: map[string]bool{}, inline: map[string]*schema{}, imports: map[string]bool{}}
	rts, err := g.routes()
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	g.buf.Reset()
	for _, name := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
		s := doc.Components.Schemas[name]
		if _, page := pageOf(name, s); page || skip[name] {
			continue
		}
		if err := g.schemaType(name, s); err != nil {
			return nil, err
		}
	}
	// Inline objects found on the way, and any found inside them.
	for done := map[string]bool{}; len(done) < len(g.inline); {
		for _, name := range slices.Sorted(maps.Keys(g.inline)) {
			if !done[name] {
				done[name] = true
				if err := g.schemaType(name, g.inline[name]); err != nil {
					return nil, err
				}
			}
		}
	}
	body.Write(g.buf.Bytes())
	body.WriteString("// routeTable is every operation of the document, by operationId.\n")
	body.WriteString("var routeTable = map[string]route{\n")
	for _, r := range rts {
		fmt.Fprintf(&body, "\t%q: {Method: %q, Path: %q, Idem: %t, Request: %q, Response: %q},\n", r.id, r.method, r.path, r.idem, r.request, r.response)
	}
	body.WriteString("}\n")

	var out bytes.Buffer
	out.WriteString("// Code generated by internal/gen from shared/groups/public/publicapi/openapi.json. DO NOT EDIT.\n\npackage platform\n\n")
	if len(g.imports) > 0 {
		out.WriteString("import (\n")
		for _, imp := range slices.Sorted(maps.Keys(g.imports)) {
			fmt.Fprintf(&out, "\t%q\n", imp)
		}
		out.WriteString(")\n\n")
	}
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated code does not parse: %w", err)
	}
	return src, nil
}
