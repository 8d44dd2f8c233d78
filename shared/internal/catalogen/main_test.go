package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"platformapi/shared/api"
	"platformapi/shared/catalog"
	"platformapi/shared/platform"
	"platformapi/shared/ports"
	"platformapi/shared/webhooks"
	"platformapi/shared/webhooks/eventdef"
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
	services, events, err := gather(groups)
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
			_, _, err := gather(tc.groups)
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
