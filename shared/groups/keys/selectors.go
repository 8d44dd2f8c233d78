package keys

import (
	"slices"
	"sort"
	"strings"

	"platformapi/shared/base/catalog"
	"platformapi/shared/base/routes"
)

// Capability selector roots (docs/keys.md).
const (
	invokeRoot = "services.invoke"
	runsRoot   = "runs.create"
)

// universe is every exact operation id a key can be allowed: the route
// operations and the exact capabilities of the service registry.
func universe() []string {
	out := routes.Operations()
	for _, s := range catalog.Services() {
		out = append(out, capabilities(s)...)
	}
	return out
}

func capabilities(s catalog.Service) []string {
	var out []string
	for _, o := range s.Operations {
		if o.Invocable {
			out = append(out, invokeRoot+"."+s.ID+"."+o.ID)
		}
		if o.Durable {
			out = append(out, runsRoot+"."+s.ID+"."+o.ID)
		}
	}
	return out
}

// splitCapability parses services.invoke.<svc>[.<op>] and runs.create.<svc>[.<op>].
func splitCapability(sel string) (root, svc, op string, ok bool) {
	for _, r := range []string{invokeRoot, runsRoot} {
		rest, found := strings.CutPrefix(sel, r+".")
		if !found {
			continue
		}
		svc, op, _ = strings.Cut(rest, ".")
		return r, svc, op, svc != ""
	}
	return "", "", "", false
}

// Expand resolves one operation selector into the exact operation ids it
// covers today. ok is false for an unknown selector.
func Expand(sel string) (ops []string, ok bool) {
	if root, svc, op, isCap := splitCapability(sel); isCap {
		s, found := catalog.Lookup(svc)
		if !found {
			return nil, false
		}
		for _, c := range capabilities(s) {
			if op == "" && strings.HasPrefix(c, root+"."+svc+".") || c == sel {
				ops = append(ops, c)
			}
		}
		return ops, op == "" || len(ops) == 1
	}
	if !routes.IsOperation(sel) {
		return nil, false
	}
	ops = []string{sel}
	if sel == invokeRoot || sel == runsRoot {
		for _, c := range universe() {
			if strings.HasPrefix(c, sel+".") {
				ops = append(ops, c)
			}
		}
	}
	return ops, true
}

// ValidLimitSelector reports whether sel may key a limit: "*", an operation
// id, or a capability selector (aggregate or exact) of a registered service.
func ValidLimitSelector(sel string) bool {
	if sel == "*" || routes.IsOperation(sel) {
		return true
	}
	_, ok := Expand(sel)
	_, _, _, isCap := splitCapability(sel)
	return ok && isCap
}

// MeteredSelector reports whether a limit selector names only credit-metered
// operations, the ones where creditsPerDay means something.
func MeteredSelector(sel string) bool {
	if slices.Contains(routes.MeteredOperations(), sel) {
		return true
	}
	root, _, _, isCap := splitCapability(sel)
	return isCap && (root == invokeRoot || root == runsRoot)
}

// RequestOperation is the exact operation id that operation access checks for
// a request: the route's, refined to the capability for invoke and runs.
func RequestOperation(route, service, operation string) string {
	if (route == invokeRoot || route == runsRoot) && service != "" && operation != "" {
		return route + "." + service + "." + operation
	}
	return route
}

// LimitSelectors lists the limit selectors a request matches, most general
// first (services.invoke and services.invoke.<svc>, and the exact
// capability for a registered operation: docs/limits.md).
func LimitSelectors(route, service, operation string) []string {
	out := []string{route}
	if (route == invokeRoot || route == runsRoot) && service != "" {
		out = append(out, route+"."+service)
		if operation != "" {
			out = append(out, route+"."+service+"."+operation)
		}
	}
	return out
}

func sortedUnique(in []string) []string {
	out := slices.Clone(in)
	sort.Strings(out)
	return slices.Compact(out)
}
