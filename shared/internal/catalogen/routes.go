package main

import (
	"bytes"
	"fmt"
	"go/format"
	"reflect"
	"regexp"
	"strconv"
	"time"

	"platformapi/shared/api"
	"platformapi/shared/base/routes"
)

const routesFile = "shared/base/routes/zz_routes.go"

// The serving groups whose rows are not in routes.Table: the public routes
// need no key and the MCP transport is no operation of its own; the kernel
// serves both at the root and under /v1.
const (
	publicGroup = "public"
	mcpGroup    = "mcp"
)

// routeTables are the declared rows split as package routes reads them,
// each in its previous order (routes.Public, routes.Table) with new rows last.
type routeTables struct {
	public []routes.Route
	mcp    routes.Route
	table  []routes.Route
	scopes []routes.Scope
}

// gatherRoutes is every group's rows, refusing a route id or a (method,
// path) declared twice, by two groups or by one: the kernel finds a route
// by its id and a request by its method and path, and would silently serve
// only one of the two.
func gatherRoutes(groups []api.Group) (routeTables, error) {
	var t routeTables
	owner := map[string]string{}
	claim := func(key, group string) error {
		if prev, dup := owner[key]; dup {
			return fmt.Errorf("%s is declared by both group %s and group %s", key, prev, group)
		}
		owner[key] = group
		return nil
	}
	mcps := 0
	for _, g := range groups {
		for _, rt := range g.Routes {
			if err := claim(fmt.Sprintf("route id %q", rt.ID), g.Name); err != nil {
				return t, err
			}
			if err := claim(fmt.Sprintf("route %s %s", rt.Method, rt.Path), g.Name); err != nil {
				return t, err
			}
			switch rt.Group {
			case publicGroup:
				t.public = append(t.public, rt)
			case mcpGroup:
				t.mcp, mcps = rt, mcps+1
			default:
				t.table = append(t.table, rt)
			}
		}
	}
	if mcps != 1 {
		return t, fmt.Errorf("%d routes are served by the %s function, want the one MCP transport", mcps, mcpGroup)
	}
	t.public = ordered(t.public, routeID, routeIDs(routes.Public))
	t.table = ordered(t.table, routeID, routeIDs(routes.Table))
	scopes, err := gatherScopes(groups)
	if err != nil {
		return t, err
	}
	t.scopes = ordered(scopes, func(s routes.Scope) string { return s.Name }, routes.ScopeNames())
	return t, nil
}

// scopeName is what a scope's name must look like: resource:action.
var scopeName = regexp.MustCompile(`^[a-z][a-z_]*:[a-z][a-z_]*$`)

// gatherScopes is every group's scopes, in the order of the groups. It
// refuses a scope declared twice (by two groups, or twice by one), one
// that is malformed or says nothing of what it allows, a route needing a
// scope no group declares (no key could ever call it, and a key asking
// for it would be refused) and a scope no route needs (it would grant
// nothing).
func gatherScopes(groups []api.Group) ([]routes.Scope, error) {
	var scopes []routes.Scope
	owner := map[string]string{}
	for _, g := range groups {
		for _, s := range g.Scopes {
			if prev, dup := owner[s.Name]; dup {
				return nil, fmt.Errorf("scope %q is declared by both group %s and group %s", s.Name, prev, g.Name)
			}
			if !scopeName.MatchString(s.Name) || s.Allows == "" {
				return nil, fmt.Errorf("scope %q of group %s needs a name resource:action and what it allows", s.Name, g.Name)
			}
			owner[s.Name] = g.Name
			scopes = append(scopes, s)
		}
	}
	needed := map[string]bool{}
	for _, g := range groups {
		for _, rt := range g.Routes {
			for _, s := range rt.Scopes {
				if _, ok := owner[s]; !ok {
					return nil, fmt.Errorf("route %s of group %s needs scope %q, which no group declares", rt.ID, g.Name, s)
				}
				needed[s] = true
			}
		}
	}
	for _, s := range scopes {
		if !needed[s.Name] {
			return nil, fmt.Errorf("scope %q of group %s is needed by no route", s.Name, owner[s.Name])
		}
	}
	return scopes, nil
}

// has reports whether id is the id of a declared route.
func (t routeTables) has(id string) bool {
	if t.mcp.ID == id {
		return true
	}
	for _, rts := range [][]routes.Route{t.public, t.table} {
		for _, rt := range rts {
			if rt.ID == id {
				return true
			}
		}
	}
	return false
}

func routeID(rt routes.Route) string { return rt.ID }

func routeIDs(rts []routes.Route) []string {
	out := make([]string, len(rts))
	for i, rt := range rts {
		out[i] = rt.ID
	}
	return out
}

func renderRoutes(t routeTables) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header + "package routes\n\n")
	b.WriteString("// Public are the routes that need no key, served at the root and under\n" +
		"// /v1: the public group's rows (api.Group.Routes), in the order they were\n" +
		"// added (docs/structure.md).\n")
	b.WriteString("var Public = []Route{\n")
	usesTime := false
	for _, rt := range t.public {
		if err := renderRoute(&b, rt, &usesTime); err != nil {
			return nil, err
		}
		b.WriteString(",\n")
	}
	b.WriteString("}\n\n")
	b.WriteString("// MCP is the remote MCP transport (docs/mcp.md), served at the root and\n" +
		"// under /v1; each tool call then runs the managed operation's own policy.\n")
	b.WriteString("var MCP = Route")
	if err := renderRoute(&b, t.mcp, &usesTime); err != nil {
		return nil, err
	}
	b.WriteString("\n\n")
	b.WriteString("// Table holds every authenticated endpoint: every group's rows\n" +
		"// (api.Group.Routes), in the order they were added (docs/structure.md).\n")
	b.WriteString("var Table = []Route{\n")
	for _, rt := range t.table {
		if err := renderRoute(&b, rt, &usesTime); err != nil {
			return nil, err
		}
		b.WriteString(",\n")
	}
	b.WriteString("}\n\n")
	b.WriteString("// Scopes is the complete scope set: every group's scopes (api.Group.Scopes),\n" +
		"// in the order they were added (docs/structure.md).\n")
	b.WriteString("var Scopes = []Scope{\n")
	for _, s := range t.scopes {
		fmt.Fprintf(&b, "{Name: %s, Allows: %s},\n", strconv.Quote(s.Name), strconv.Quote(s.Allows))
	}
	b.WriteString("}\n")
	src := b.Bytes()
	if usesTime {
		src = bytes.Replace(src, []byte("package routes\n\n"), []byte("package routes\n\nimport \"time\"\n\n"), 1)
	}
	return format.Source(src)
}

var bodyNames = map[routes.Body]string{
	routes.BodyNone: "BodyNone", routes.BodyJSON: "BodyJSON", routes.BodyRaw: "BodyRaw", routes.BodyZip: "BodyZip",
}

// renderRoute writes rt as a composite literal of its fields that are set.
// It goes through every field of Route, so a field added to Route is
// written too or refused here, never silently dropped.
func renderRoute(b *bytes.Buffer, rt routes.Route, usesTime *bool) error {
	v := reflect.ValueOf(rt)
	b.WriteString("{")
	first := true
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if f.IsZero() {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		b.WriteString(name + ": ")
		switch x := f.Interface().(type) {
		case string:
			b.WriteString(strconv.Quote(x))
		case bool:
			b.WriteString("true")
		case []string:
			b.WriteString("[]string{")
			for j, s := range x {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(strconv.Quote(s))
			}
			b.WriteString("}")
		case routes.Body:
			n, ok := bodyNames[x]
			if !ok {
				return fmt.Errorf("route %s: unknown body %d", rt.ID, x)
			}
			b.WriteString(n)
		case *routes.Deprecation:
			*usesTime = true
			fmt.Fprintf(b, "&Deprecation{Since: %s, Sunset: %s, Successor: %s}", timeLiteral(x.Since), timeLiteral(x.Sunset), strconv.Quote(x.Successor))
		default:
			return fmt.Errorf("route %s: field %s of type %T cannot be written", rt.ID, name, x)
		}
	}
	b.WriteString("}")
	return nil
}

func timeLiteral(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("time.Date(%d, %d, %d, %d, %d, %d, %d, time.UTC)", t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond())
}
