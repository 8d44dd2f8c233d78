package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/base/routes"
)

// Lists are never null on the wire (Page.Data and every list field is
// written as [] when empty), so a typed client must not be told to
// null-check them. huma reads this global while it builds schemas, that
// is at Register, long after package initialisation.
func init() { huma.DefaultArrayNullable = false }

// Tag is a group of operations in the reference: a readable title and what
// the group is for.
type Tag struct{ Name, Description string }

// Section is one section of the reference: its tag, and the routes filed
// under it, each named by its operation (auditEvents.list) or its
// function (routes.Route.Group). A route is filed under the section that
// names its operation, else under the one that names its function, else
// under its function's name (a test route). Each group declares its own
// sections.
type Section struct {
	Tag
	Files []string
}

// sectionOf is the section rt is filed under among sections.
func sectionOf(sections []Section, rt routes.Route) Tag {
	for _, key := range []string{rt.Operation, rt.Group} {
		for _, s := range sections {
			if slices.Contains(s.Files, key) {
				return s.Tag
			}
		}
	}
	return Tag{Name: rt.Group}
}

// examplesJSON maps a component schema's name to a real request or
// response body of that schema, captured from the test suite by `make
// openapi-examples`, so the reference shows what the API sends instead of
// placeholders.
//
//go:embed openapi_examples.json
var examplesJSON []byte

// Examples are the captured bodies by schema name.
func Examples() (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(examplesJSON, &m); err != nil {
		return nil, fmt.Errorf("api: openapi_examples.json: %w", err)
	}
	return m, nil
}

// finishDocument completes the document once every group has registered:
// no 422s, the sections that have operations, the MCP transport when this
// process serves it, and an example for every schema that has one.
func finishDocument(doc *huma.OpenAPI, mcp bool, sections []Section) {
	dropUnusedStatuses(doc)
	if mcp {
		documentMCP(doc)
	}
	used := map[string]bool{}
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			if rt, ok := routes.ByID(op.OperationID); ok {
				op.Tags = []string{sectionOf(sections, rt).Name}
			}
			for _, t := range op.Tags {
				used[t] = true
			}
		}
	}
	// In the order of each section's first route in the route table, where
	// a new group's routes go last: the reference never moves with the
	// order of the groups.
	doc.Tags = nil
	for _, rt := range append(append(slices.Clone(routes.Public), routes.MCP), routes.Table...) {
		if t := sectionOf(sections, rt); used[t.Name] {
			doc.Tags = append(doc.Tags, &huma.Tag{Name: t.Name, Description: t.Description})
			used[t.Name] = false
		}
	}
	nullObjects(doc.Components.Schemas)
	for _, s := range doc.Components.Schemas.Map() {
		nullInEnums(s)
	}
	examples, err := Examples()
	if err != nil {
		panic(err) // the embedded file is checked by the package's tests
	}
	for name, s := range doc.Components.Schemas.Map() {
		if v, ok := examples[name]; ok {
			s.Examples = []any{v}
		}
	}
}

// documentMCP adds POST /mcp, which is no huma operation (the MCP SDK
// serves it), with the route's own policy, so it is on /docs and in the
// SDKs' view of the API like every other operation.
func documentMCP(doc *huma.OpenAPI) {
	rt := routes.MCP
	op := operation(rt)
	op.Description = "The remote MCP server, stateless [Streamable HTTP](https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http): each POST carries one JSON-RPC 2.0 message (`initialize`, `tools/list`, `tools/call`, …) and is answered with one JSON-RPC message as `application/json`; a notification is answered 202 with no body. Send `Accept: application/json, text/event-stream` as the transport requires. The tools are the key's callable capabilities (`GET /actions`), and each `tools/call` runs the invoked operation's own policy and charges as `POST /services/{serviceId}/invoke` does. A browser may call it only from an allowed origin.\n\n" + op.Description
	op.MaxBodyBytes = 0
	reg := doc.Components.Schemas
	errRef := reg.Schema(reflect.TypeOf(huma.NewError(0, "")), true, "")
	reg.Map()["MCPRequest"] = &huma.Schema{
		Type: huma.TypeObject, Description: "One JSON-RPC 2.0 request or notification of the Model Context Protocol.",
		Required: []string{"jsonrpc", "method"},
		Properties: map[string]*huma.Schema{
			"jsonrpc": {Type: huma.TypeString, Enum: []any{"2.0"}},
			"id":      {Description: "Absent on a notification; echoed in the response.", OneOf: []*huma.Schema{{Type: huma.TypeString}, {Type: huma.TypeInteger}}},
			"method":  {Type: huma.TypeString, Description: "`initialize`, `tools/list`, `tools/call`, `ping`, or a notification such as `notifications/initialized`."},
			"params":  {Type: huma.TypeObject, Description: "The method's parameters, as the MCP specification defines them."},
		},
	}
	reg.Map()["MCPResponse"] = &huma.Schema{
		Type: huma.TypeObject, Description: "One JSON-RPC 2.0 response: `result` on success, `error` otherwise. A failed tool call is a result with `isError: true`.",
		Required: []string{"jsonrpc", "id"},
		Properties: map[string]*huma.Schema{
			"jsonrpc": {Type: huma.TypeString, Enum: []any{"2.0"}},
			"id":      {OneOf: []*huma.Schema{{Type: huma.TypeString}, {Type: huma.TypeInteger}}},
			"result":  {Type: huma.TypeObject, Description: "The method's result, as the MCP specification defines it."},
			"error": {
				Type: huma.TypeObject, Required: []string{"code", "message"},
				Properties: map[string]*huma.Schema{
					"code":    {Type: huma.TypeInteger, Format: "int64"},
					"message": {Type: huma.TypeString},
					"data":    {Description: "More about the error, when there is more."},
				},
			},
		},
	}
	op.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"application/json": {Schema: &huma.Schema{Ref: "#/components/schemas/MCPRequest"}},
	}}
	op.Responses = map[string]*huma.Response{
		"200": {Description: "The JSON-RPC response", Content: map[string]*huma.MediaType{
			"application/json": {Schema: &huma.Schema{Ref: "#/components/schemas/MCPResponse"}},
		}},
		"202": {Description: "A notification or a client's response was accepted; no body"},
	}
	for _, code := range op.Errors {
		op.Responses[strconv.Itoa(code)] = &huma.Response{Description: http.StatusText(code), Content: map[string]*huma.MediaType{
			"application/problem+json": {Schema: errRef},
		}}
	}
	op.Errors = nil
	doc.AddOperation(&op)
}

// nullObjects marks nullable every object property the server writes as
// null: a pointer to a struct without omitempty (a run's error before it
// fails, a quote's issue that does not apply). huma cannot state that
// itself (it refuses nullable on a referenced object), so the property
// becomes anyOf the object or null.
func nullObjects(reg huma.Registry) {
	for name, s := range reg.Map() {
		t := reg.TypeFromRef("#/components/schemas/" + name)
		if t == nil || s.Properties == nil {
			continue
		}
		for _, f := range reflect.VisibleFields(deref(t)) {
			tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			prop := s.Properties[tag]
			if !f.IsExported() || tag == "" || tag == "-" || strings.Contains(opts, "omitempty") || prop == nil || prop.Ref == "" ||
				f.Type.Kind() != reflect.Pointer || deref(f.Type).Kind() != reflect.Struct {
				continue
			}
			s.Properties[tag] = &huma.Schema{Description: prop.Description, AnyOf: []*huma.Schema{{Ref: prop.Ref}, {Type: "null"}}}
		}
	}
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// nullInEnums lists null among the values of every nullable enum (an
// order's rejectReason): huma types such a field ["string", "null"] but
// leaves its enum without null, so a real null would not validate.
func nullInEnums(s *huma.Schema) {
	if s == nil {
		return
	}
	if s.Nullable && len(s.Enum) > 0 && !slices.Contains(s.Enum, nil) {
		s.Enum = append(s.Enum, nil)
	}
	for _, p := range s.Properties {
		nullInEnums(p)
	}
	nullInEnums(s.Items)
}
