package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// methodsDoc has one operation of every form a generated method takes.
const methodsDoc = `{
  "paths": {
    "/boxes": {
      "get": {"operationId": "boxes.list", "summary": "List boxes",
        "parameters": [{"in": "query", "name": "limit", "schema": {"type": "integer"}}, {"in": "query", "name": "cursor", "schema": {"type": "string"}}],
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/PageBox"}}}}}},
      "post": {"operationId": "boxes.create", "summary": "Create a box",
        "parameters": [{"in": "header", "name": "Idempotency-Key", "required": true}],
        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/BoxCreate"}}}},
        "responses": {"201": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Box"}}}}}}
    },
    "/boxes/{boxId}/lids/{lidId}": {
      "get": {"operationId": "boxes.lids.read", "summary": "Read a lid",
        "parameters": [{"in": "path", "name": "boxId", "schema": {"type": "string"}}, {"in": "path", "name": "lidId", "schema": {"type": "string"}}],
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Box"}}}}}}
    },
    "/boxes/{id}/seal": {
      "post": {"operationId": "boxes.seal", "summary": "Seal a box",
        "parameters": [{"in": "path", "name": "id", "schema": {"type": "string"}}],
        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}},
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Deleted"}}}}}}
    },
    "/boxes/{id}/content": {
      "get": {"operationId": "boxes.content.read", "summary": "Download a box",
        "parameters": [{"in": "path", "name": "id", "schema": {"type": "string"}}],
        "responses": {"200": {"content": {"application/octet-stream": {"schema": {"type": "string"}}}}}}
    },
    "/mcp": {"post": {"operationId": "mcp", "responses": {"200": {"content": {"application/json": {"schema": {}}}}}}}
  },
  "components": {"schemas": {
    "PageBox": {"type": "object", "properties": {"data": {"type": ["array", "null"], "items": {"$ref": "#/components/schemas/Box"}}, "nextCursor": {"type": ["string", "null"]}}},
    "Box": {"type": "object", "properties": {"id": {"type": "string"}}},
    "BoxCreate": {"type": "object", "properties": {"name": {"type": "string"}}},
    "Deleted": {"type": "object", "properties": {"deleted": {"type": "boolean"}}},
    "Empty": {"type": "object"}
  }}
}`

func parseDoc(t *testing.T, src string) *document {
	t.Helper()
	var d document
	if err := json.Unmarshal([]byte(src), &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// Every operation the generator can express gets its method, named verb
// first, its pager beside a list, and its line in Operations; the
// transport has none, and a method written by hand is left to it.
func TestEveryOperationGetsAGeneratedMethodUnlessWrittenByHand(t *testing.T) {
	dir := t.TempDir()
	byHand := "package platform\n\nfunc (c *Client) GetBoxContent() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "byhand.go"), []byte(byHand), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := clientMethods(parseDoc(t, methodsDoc), dir)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(string(src)), " ")
	for _, c := range []struct{ rule, want string }{
		{"a list pages with ListOptions", "func (c *Client) ListBoxes(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[*Box]], error) { return list[*Box](ctx, c, \"boxes.list\", nil, o, nil, opts) }"},
		{"a list has its pager", "func (c *Client) AllBoxes(ctx context.Context, o ListOptions, opts ...CallOption) iter.Seq2[*Box, error] { return Each(ctx, o, c.ListBoxes, opts...) }"},
		{"a body is the request's type", "func (c *Client) CreateBox(ctx context.Context, req BoxCreate, opts ...CallOption) (Result[*Box], error) { return jsonCall[*Box](ctx, c, \"boxes.create\", nil, nil, req, opts) }"},
		{"path parameters are strings in path order", "func (c *Client) GetBoxLid(ctx context.Context, boxID string, lidID string, opts ...CallOption) (Result[*Box], error) { return jsonCall[*Box](ctx, c, \"boxes.lids.read\", map[string]string{\"boxId\": boxID, \"lidId\": lidID}, nil, nil, opts)"},
		{"an empty body is sent as {} and takes no argument; Deleted is answered by value", "func (c *Client) SealBox(ctx context.Context, id string, opts ...CallOption) (Result[Deleted], error) { return jsonCall[Deleted](ctx, c, \"boxes.seal\", map[string]string{\"id\": id}, nil, struct{}{}, opts)"},
		{"the summary documents the method", "// CreateBox is POST /boxes: Create a box."},
		{"Operations names every method, hand-written ones included", `"boxes.content.read": "GetBoxContent", "boxes.create": "CreateBox",`},
	} {
		if !strings.Contains(out, strings.Join(strings.Fields(c.want), " ")) {
			t.Errorf("%s: no %s in\n%s", c.rule, c.want, src)
		}
	}
	for _, absent := range []string{"func (c *Client) GetBoxContent", `"mcp"`} {
		if strings.Contains(out, absent) {
			t.Errorf("%s was generated:\n%s", absent, src)
		}
	}
}

// An operation the generator cannot express fails the generation, naming
// the method to write by hand, rather than getting a method that drops a
// parameter.
func TestAnOperationTheGeneratorCannotExpressFails(t *testing.T) {
	filtered := strings.Replace(methodsDoc, `{"in": "query", "name": "limit", "schema": {"type": "integer"}}`,
		`{"in": "query", "name": "colour", "schema": {"type": "string"}}`, 1)
	_, err := clientMethods(parseDoc(t, filtered), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "query parameter colour: write ListBoxes by hand") {
		t.Fatalf("error %v, want the filter refused", err)
	}
}

func TestAMethodIsNamedVerbFirst(t *testing.T) {
	for id, want := range map[string]string{
		"projects.list": "ListProjects", "projects.read": "GetProject", "wallets.transactions.read": "GetWalletTransaction",
		"wallets.transactions.list": "ListWalletTransactions", "webhookDeliveries.replay": "ReplayWebhookDelivery",
		"apiKeys.create": "CreateAPIKey", "capabilities.list": "ListCapabilities", "credits.balance.read": "Balance",
	} {
		if got := methodName(id); got != want {
			t.Errorf("methodName(%q) = %s, want %s", id, got, want)
		}
	}
}
