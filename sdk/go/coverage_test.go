package platform

import (
	"reflect"
	"strings"
	"testing"
)

// transportOnly are operations of the document that are not SDK calls:
// /mcp is the MCP transport, spoken by MCP clients.
var transportOnly = map[string]bool{"mcp": true}

// answeredOtherwise are operations whose method answers another type than
// the document's success schema, and why.
var answeredOtherwise = map[string]string{
	"credits.x402.topUp":     "TopUpReceipt",    // TopUpResult and the Payment-Response settlement
	"pricing.read":           "json.RawMessage", // untyped since before the generated types
	"artifacts.content.read": "*Download",       // any media type, streamed
}

// goName is t's name without this package's path, as zz_generated.go
// spells it: "Page[Project]", "json.RawMessage", "*Download".
func goName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		return "*" + goName(t.Elem())
	}
	s := t.String()
	s = strings.ReplaceAll(s, reflect.TypeFor[Client]().PkgPath()+".", "")
	return strings.ReplaceAll(s, "platform.", "")
}

// Every operation of the OpenAPI document has a Client method (Operations
// names it) that sends the document's body type and answers its success
// type, so a changed schema or a new operation fails here, not at a user's.
func TestEveryOperationOfTheDocumentHasAMethodOfItsTypes(t *testing.T) {
	client := reflect.TypeFor[*Client]()
	for id, rt := range routeTable {
		if transportOnly[id] {
			continue
		}
		name, ok := Operations[id]
		if !ok {
			t.Errorf("operation %s (%s %s) has no SDK method", id, rt.Method, rt.Path)
			continue
		}
		m, ok := client.MethodByName(name)
		if !ok {
			t.Errorf("operation %s names method %s, which *Client does not have", id, name)
			continue
		}
		value, _ := m.Type.Out(0).FieldByName("Value")
		// Pointers (a *Project, a Page[*Project]) are the SDK's choice.
		got, want := strings.ReplaceAll(goName(value.Type), "*", ""), rt.Response
		switch {
		case answeredOtherwise[id] != "":
			want = strings.ReplaceAll(answeredOtherwise[id], "*", "")
		case want == "stream":
			want = "Download"
		}
		if got != want {
			t.Errorf("%s answers %s, the document %s", name, got, want)
		}
		if rt.Request == "" || rt.Request == "stream" || id == "credits.x402.topUp" {
			continue
		}
		sent := false
		for i := range m.Type.NumIn() {
			in := m.Type.In(i)
			sent = sent || goName(in) == rt.Request
		}
		if !sent && !emptyBody(rt.Request) {
			t.Errorf("%s takes no %s", name, rt.Request)
		}
	}
	for id := range Operations {
		if _, ok := routeTable[id]; !ok {
			t.Errorf("SDK maps %s, which is not an operation of the document", id)
		}
	}
}

// emptyBody reports whether a request schema has no properties: the
// method sends {} and takes no argument for it.
func emptyBody(name string) bool {
	switch name {
	case "ProvisionInputBody", "CompleteInputBody":
		return reflect.TypeFor[ProvisionInputBody]().NumField() == 0 && reflect.TypeFor[CompleteInputBody]().NumField() == 0
	}
	return false
}
