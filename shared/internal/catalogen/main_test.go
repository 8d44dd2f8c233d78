package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/routes"
	"platformapi/shared/groups/webhooks"
	"platformapi/shared/groups/webhooks/eventdef"
	"platformapi/shared/platform"
)

// The committed tables are what the groups declare, byte for byte, and the
// tables the processes read hold every field of every declaration (a field
// the generator did not write would be lost without this).
func TestTheTablesAreWhatTheGroupsDeclare(t *testing.T) {
	files, err := generate(platform.Groups)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("../../..", path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the groups' declarations: run make catalogue and commit it", path)
		}
	}
	groups, err := api.Build(platform.Groups, ports.Ports{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	rts, err := gatherRoutes(groups)
	if err != nil {
		t.Fatal(err)
	}
	services, events, err := gather(groups, rts.has)
	if err != nil {
		t.Fatal(err)
	}
	services = ordered(services, func(s catalog.Service) string { return s.ID }, serviceIDs(catalog.Services()))
	events = ordered(events, func(e eventdef.Def) string { return e.Name }, webhooks.EventNames())
	if !reflect.DeepEqual(catalog.Services(), services) {
		t.Errorf("catalog.Services() is not what the groups declare:\n got %+v\nwant %+v", catalog.Services(), services)
	}
	if !reflect.DeepEqual(webhooks.Catalogue, events) {
		t.Errorf("webhooks.Catalogue is not what the groups declare:\n got %+v\nwant %+v", webhooks.Catalogue, events)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{{"routes.Public", routes.Public, rts.public}, {"routes.MCP", routes.MCP, rts.mcp}, {"routes.Table", routes.Table, rts.table}, {"routes.Scopes", routes.Scopes, rts.scopes}} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s is not what the groups declare:\n got %+v\nwant %+v", c.name, c.got, c.want)
		}
	}
}

// A route id and a method and path are declared once, by one group, once:
// the kernel finds a route by its id and a request by its method and path,
// and would serve only one of two. There is one MCP transport.
func TestARouteIsDeclaredOnce(t *testing.T) {
	mcp := routes.Route{Method: "POST", Path: "/mcp", Group: "mcp", ID: "mcp"}
	row := func(method, path, id string) routes.Route {
		return routes.New(method, path, "a", id, "", routes.NoIdem, routes.BodyNone, "")
	}
	for _, tc := range []struct {
		name    string
		groups  []api.Group
		wantErr string
	}{
		{"distinct routes", []api.Group{
			{Name: "a", Routes: []routes.Route{row("GET", "/a", "a.read"), row("POST", "/a", "a.create")}},
			{Name: "b", Routes: []routes.Route{row("GET", "/b", "b.read"), mcp}},
		}, ""},
		{"one id in two groups", []api.Group{
			{Name: "a", Routes: []routes.Route{row("GET", "/a", "x.read"), mcp}},
			{Name: "b", Routes: []routes.Route{row("GET", "/b", "x.read")}},
		}, `route id "x.read" is declared by both group a and group b`},
		{"one id twice in a group", []api.Group{
			{Name: "a", Routes: []routes.Route{row("GET", "/a", "x.read"), row("GET", "/b", "x.read"), mcp}},
		}, `route id "x.read" is declared by both group a and group a`},
		{"one operation under two ids", []api.Group{
			{Name: "a", Routes: []routes.Route{row("GET", "/a", "x.read"), row("GET", "/a/{id}", "x.read").WithID("x.read.one"), mcp}},
		}, ""},
		{"one method and path in two groups", []api.Group{
			{Name: "a", Routes: []routes.Route{row("GET", "/a", "a.read"), mcp}},
			{Name: "b", Routes: []routes.Route{row("GET", "/a", "b.read")}},
		}, `route GET /a is declared by both group a and group b`},
		{"no MCP transport", []api.Group{
			{Name: "a", Routes: []routes.Route{row("GET", "/a", "a.read")}},
		}, `0 routes are served by the mcp function`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gatherRoutes(tc.groups)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// A scope is declared once, by one group, well formed and saying what it
// allows; every scope a route needs is declared and every declared scope
// is needed by a route. A key is checked against the declared set, so an
// undeclared scope would lock its route away from every key.
func TestAScopeIsDeclaredOnceAndEveryRoutesScopeIsDeclared(t *testing.T) {
	row := func(id, scopes string) routes.Route {
		return routes.New("GET", "/"+id, "a", id, scopes, routes.NoIdem, routes.BodyNone, "")
	}
	sc := func(names ...string) []routes.Scope {
		var out []routes.Scope
		for _, n := range names {
			out = append(out, routes.Scope{Name: n, Allows: "Everything " + n + " says."})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		groups  []api.Group
		wantErr string
	}{
		{"each group its own", []api.Group{
			{Name: "a", Routes: []routes.Route{row("a.read", "a:read")}, Scopes: sc("a:read")},
			{Name: "b", Routes: []routes.Route{row("b.read", "b:read a:read")}, Scopes: sc("b:read")},
		}, ""},
		{"one scope in two groups", []api.Group{
			{Name: "a", Routes: []routes.Route{row("a.read", "x:read")}, Scopes: sc("x:read")},
			{Name: "b", Scopes: sc("x:read")},
		}, `scope "x:read" is declared by both group a and group b`},
		{"one scope twice in a group", []api.Group{
			{Name: "a", Routes: []routes.Route{row("a.read", "x:read")}, Scopes: sc("x:read", "x:read")},
		}, `scope "x:read" is declared by both group a and group a`},
		{"a route needing an undeclared scope", []api.Group{
			{Name: "a", Routes: []routes.Route{row("a.read", "a:read")}, Scopes: sc("a:read")},
			{Name: "b", Routes: []routes.Route{row("b.read", "runs:write")}},
		}, `route b.read of group b needs scope "runs:write", which no group declares`},
		{"a scope no route needs", []api.Group{
			{Name: "a", Routes: []routes.Route{row("a.read", "a:read")}, Scopes: sc("a:read", "a:write")},
		}, `scope "a:write" of group a is needed by no route`},
		{"a malformed name", []api.Group{
			{Name: "a", Routes: []routes.Route{row("a.read", "read")}, Scopes: sc("read")},
		}, `scope "read" of group a needs a name resource:action`},
		{"no word of what it allows", []api.Group{
			{Name: "a", Routes: []routes.Route{row("a.read", "a:read")}, Scopes: []routes.Scope{{Name: "a:read"}}},
		}, `scope "a:read" of group a needs a name resource:action and what it allows`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gatherScopes(tc.groups)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// A scope already in the set keeps its place and a new one goes last,
// whatever the order of the groups: a first key lists its scopes in the
// set's order, which the spec fixes.
func TestAScopeKeepsItsPlaceAndANewOneGoesLast(t *testing.T) {
	declared := []routes.Scope{{Name: "new:write"}, {Name: "runs:read"}, {Name: "services:read"}}
	got := ordered(declared, func(s routes.Scope) string { return s.Name }, routes.ScopeNames())
	want := []routes.Scope{{Name: "services:read"}, {Name: "runs:read"}, {Name: "new:write"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ordered %v, want %v", got, want)
	}
}

// A service id, an operation id or an event name is declared once: by one
// group, once. Lookups find the first, so a second would be silently lost.
// An event's emitting and reading operations are routes.
func TestAnEntryIsDeclaredOnceAndAnEventNamesRoutes(t *testing.T) {
	svc := func(id string, ops ...string) catalog.Service {
		s := catalog.Service{ID: id}
		for _, o := range ops {
			s.Operations = append(s.Operations, catalog.Operation{ID: o})
		}
		return s
	}
	ev := func(name string) eventdef.Def {
		return eventdef.Def{Name: name, EmittedBy: "projects.create", ReadBy: "projects.read"}
	}
	for _, tc := range []struct {
		name    string
		groups  []api.Group
		wantErr string
	}{
		{"distinct entries", []api.Group{
			{Name: "a", Services: []catalog.Service{svc("s1", "s1.op")}, Events: []eventdef.Def{ev("a.done")}},
			{Name: "b", Services: []catalog.Service{svc("s2", "s2.op")}, Events: []eventdef.Def{ev("b.done")}},
		}, ""},
		{"one service in two groups", []api.Group{
			{Name: "a", Services: []catalog.Service{svc("s1", "x.op")}},
			{Name: "b", Services: []catalog.Service{svc("s1", "y.op")}},
		}, `service "s1" is declared by both group a and group b`},
		{"one operation in two services", []api.Group{
			{Name: "a", Services: []catalog.Service{svc("s1", "op")}},
			{Name: "b", Services: []catalog.Service{svc("s2", "op")}},
		}, `operation "op" is declared by both group a and group b`},
		{"one operation twice in a service", []api.Group{
			{Name: "a", Services: []catalog.Service{svc("s1", "op", "op")}},
		}, `operation "op" is declared by both group a and group a`},
		{"one event in two groups", []api.Group{
			{Name: "a", Events: []eventdef.Def{ev("x.done")}},
			{Name: "b", Events: []eventdef.Def{ev("x.done")}},
		}, `event "x.done" is declared by both group a and group b`},
		{"an event read by no route", []api.Group{
			{Name: "a", Events: []eventdef.Def{{Name: "x.done", EmittedBy: "projects.create", ReadBy: "projects.peek"}}},
		}, `event "x.done" of group a names "projects.peek", which is no route`},
		{"an event emitted by no route", []api.Group{
			{Name: "a", Events: []eventdef.Def{{Name: "x.done", EmittedBy: "projects.make", ReadBy: "projects.read"}}},
		}, `event "x.done" of group a names "projects.make", which is no route`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := gather(tc.groups, func(id string) bool { _, ok := routes.ByID(id); return ok })
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// An entry the table already lists keeps its place, a new one goes last in
// declaration order, and one no longer declared leaves: the order of every
// listing is the order entries were added in, whatever the order of groups.
func TestAnEntryKeepsItsPlaceAndANewOneGoesLast(t *testing.T) {
	for _, tc := range []struct {
		name               string
		declared, previous []string
		want               []string
	}{
		{"first generation", []string{"b", "a"}, nil, []string{"b", "a"}},
		{"nothing new", []string{"a", "b", "c"}, []string{"c", "a", "b"}, []string{"c", "a", "b"}},
		{"a new entry", []string{"new", "a", "b"}, []string{"b", "a"}, []string{"b", "a", "new"}},
		{"two new entries", []string{"n2", "a", "n1"}, []string{"a"}, []string{"a", "n2", "n1"}},
		{"a removed entry", []string{"a", "c"}, []string{"c", "b", "a"}, []string{"c", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ordered(tc.declared, func(s string) string { return s }, tc.previous)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Every field of a route is written into the table, the deprecation with
// its dates: a field the generator skipped would be lost in every process.
func TestEveryFieldOfARouteIsWritten(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	rt := routes.New("POST", "/a/{id}", "a", "a.do", "a:write b:read", routes.Idem, routes.BodyZip, "Do").
		WithService("s").WithServiceFrom("path:id").WithOperationFrom("body:operationId").WithID("a.do.one").
		WithMetered().WithCommit().WithSecret().WithCreditToken().WithArchivedReadable().WithReplay("X-A").
		Deprecate(day(1), day(31), "/b")
	v := reflect.ValueOf(rt)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test route leaves %s unset", v.Type().Field(i).Name)
		}
	}
	var b bytes.Buffer
	usesTime := false
	if err := renderRoute(&b, rt, &usesTime); err != nil {
		t.Fatal(err)
	}
	want := `{Method: "POST", Path: "/a/{id}", Group: "a", Operation: "a.do", ID: "a.do.one", Scopes: []string{"a:write", "b:read"}, Idem: true, Body: BodyZip, ` +
		`Service: "s", ServiceFrom: "path:id", CreditToken: true, Metered: true, OperationFrom: "body:operationId", Commit: true, ReplayHeaders: []string{"X-A"}, ` +
		`Secret: true, ArchivedReadable: true, Summary: "Do", Deprecated: &Deprecation{Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ` +
		`Sunset: time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC), Successor: "/b"}}`
	if b.String() != want || !usesTime {
		t.Errorf("wrote\n%s\nwant\n%s (imports time: %v)", b.String(), want, usesTime)
	}
}
