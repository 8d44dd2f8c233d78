package apitest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// core are the groups every test server has (apitest.Core), so every
// group's tests link them: a test makes its keys (keys), buys their credits
// with a credit token (credits), binds them to projects (projects) and
// reads the catalogue and the document (public) through them.
var core = []string{"publicapi", "keysapi", "creditsapi", "projectsapi"}

// reaches are, for each group package, the other groups its tests reach
// (what its groups_test.go Serves) and why: the allow-list of a group's
// tests linking another group's HTTP package. Each reach is a test that
// serves the other group, none a helper borrowed from its package (a
// helper two groups' tests share belongs in apitest). A group not listed
// reaches only the core groups. The list can only shrink: a reach its
// tests no longer link fails until it is dropped.
var reaches = map[string]struct {
	groups []string
	why    string
}{
	"connectionsapi": {[]string{"servicesapi", "mcpapi", "runsapi", "webhooksapi"}, "a connection's secret is proven to reach only its service: through invocations, MCP, runs and webhook payloads"},
	"filesapi":       {[]string{"webhooksapi"}, "uploads publish webhook events"},
	"keysapi":        {[]string{"servicesapi", "webhooksapi"}, "a key's service scopes and a rolled key's webhooks"},
	"mcpapi":         {[]string{"servicesapi"}, "the MCP group serves the services group's tools (it has no tests of its own)"},
	"runsapi":        {[]string{"servicesapi"}, "runs invoke services"},
	"servicesapi":    {[]string{"mcpapi", "approvalsapi", "webhooksapi", "runsapi", "usageapi"}, "actions wait for approvals, publish events and start runs; MCP serves the same tools; a call's charge is read back on its audit events"},
	"swapsapi":       {[]string{"walletsapi", "approvalsapi"}, "a swap executes as a wallet transaction under the wallet's policy and its approvals"},
	"tradingapi":     {[]string{"webhooksapi"}, "an order's changes commit their webhook events"},
	"usageapi":       {[]string{"servicesapi", "filesapi"}, "usage is counted from priced calls and stored files"},
	"walletsapi":     {[]string{"approvalsapi", "webhooksapi"}, "transactions wait for approvals and publish events"},
	"webhooksapi":    {[]string{"servicesapi", "approvalsapi"}, "deliveries of service and approval events"},
	// The exception: the ledger's tests charge through every priced
	// group, so they reach the whole platform, the chain and SQLite.
	"creditsapi": {[]string{"approvalsapi", "connectionsapi", "databasesapi", "filesapi", "mcpapi", "runsapi", "servicesapi", "swapsapi", "tradingapi", "usageapi", "walletsapi", "webhooksapi"},
		"the ledger's tests charge through every priced group"},
}

// heavy are packages only some groups' tests may link: an Ethereum node or
// the development chain on one (the groups that send transactions), and
// SQLite (managed databases). bbolt is not among them: it is the embedded
// store every group's tests run on (teststores).
var heavy = map[string][]string{
	"github.com/ethereum/go-ethereum/node":   {"walletsapi", "swapsapi", "creditsapi"},
	"github.com/ethereum/go-ethereum/eth":    {"walletsapi", "swapsapi", "creditsapi"},
	"platformapi/shared/base/chain/devchain": {"walletsapi", "swapsapi", "creditsapi"},
	"modernc.org/sqlite":                     {"databasesapi", "creditsapi"},
}

// Each group's tests link only that group, the core ones and those it
// reaches (listed above with the reason): a test binary builds only the
// groups it Serves, so a change to one group rebuilds and reruns only the
// tests that reach it.
func TestEachGroupsTestsLinkOnlyTheGroupsTheyReach(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list for every group")
	}
	dirs, err := filepath.Glob("../../groups/*/*api")
	if err != nil || len(dirs) < len(core) {
		t.Fatalf("found the groups %v (%v)", dirs, err)
	}
	for _, dir := range dirs {
		group := filepath.Base(dir)
		t.Run(group, func(t *testing.T) {
			linked := testDeps(t, dir)
			allowed := append(append([]string{group}, core...), reaches[group].groups...)
			for _, p := range linked {
				if other, ok := groupOf(p); ok && !slices.Contains(allowed, other) {
					t.Errorf("its tests link the %s group; Serve it and list it in reaches with the reason, or drop the test that reaches it", other)
				}
			}
			if r, ok := reaches[group]; ok && (len(r.groups) == 0 || r.why == "") {
				t.Errorf("its entry in reaches needs the groups it reaches and why")
			}
			for _, other := range reaches[group].groups {
				if !slices.ContainsFunc(linked, func(p string) bool { g, ok := groupOf(p); return ok && g == other }) {
					t.Errorf("its tests no longer link the %s group: drop it from reaches", other)
				}
			}
			for pkg, groups := range heavy {
				links := slices.ContainsFunc(linked, func(p string) bool { return p == pkg || strings.HasPrefix(p, pkg+"/") })
				switch {
				case links && !slices.Contains(groups, group):
					t.Errorf("its tests link %s, which only %v need", pkg, groups)
				case !links && slices.Contains(groups, group):
					t.Errorf("its tests no longer link %s: drop it from heavy", pkg)
				}
			}
		})
	}
	for group := range reaches {
		if !slices.ContainsFunc(dirs, func(dir string) bool { return filepath.Base(dir) == group }) {
			t.Errorf("reaches lists %s, which is no group's HTTP package: drop it", group)
		}
	}
}

// testDeps is what go list says the tests of the package in dir link.
func testDeps(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-test", "./"+filepath.ToSlash(dir))
	cmd.Env = os.Environ()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// groupOf is the group whose HTTP package p is (shared/groups/<name>/<name>api).
func groupOf(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "platformapi/shared/groups/")
	segs := strings.Split(rest, "/")
	if !ok || len(segs) != 2 || !strings.HasSuffix(segs[1], "api") {
		return "", false
	}
	return segs[1], true
}
