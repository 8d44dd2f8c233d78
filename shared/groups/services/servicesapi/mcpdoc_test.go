package servicesapi_test

import (
	"os"
	"strings"
	"testing"

	"platformapi/shared/base/catalog"
)

// docs/mcp.md names exactly the services whose operations can be MCP
// tools, and each such operation: a service without an invocable
// operation (databases, wallets, trading, swaps) is never listed as one.
func TestTheMCPPageListsExactlyTheInvocableOperationsAsTools(t *testing.T) {
	raw, err := os.ReadFile("../../../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	from, to := strings.Index(page, "That is, at most:"), strings.Index(page, "are no MCP tools")
	if from < 0 || to < from {
		t.Fatal("docs/mcp.md has no list of the tools (\"That is, at most:\" … \"are no MCP tools\")")
	}
	list := page[from:to]
	for _, svc := range catalog.Services() {
		var ops []string
		for _, o := range svc.Operations {
			if o.Invocable {
				ops = append(ops, o.ID)
			}
		}
		listed := strings.Contains(list, "`"+svc.ID+"`")
		if listed != (len(ops) > 0) {
			t.Errorf("%s: listed among the tools %v, has %d invocable operations", svc.ID, listed, len(ops))
		}
		for _, op := range ops {
			if !strings.Contains(list, "`"+op+"`") {
				t.Errorf("%s: the tool %s is not listed", svc.ID, op)
			}
		}
	}
}
