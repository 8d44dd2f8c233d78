// Package limits holds per-key operation limits (docs/limits.md): their
// shape and validation, and the exact counting of requests per minute,
// concurrent leases and credits per UTC day on the item-store port. A request
// is counted against every matching selector of its key and of every
// ancestor, so an ancestor's limit caps its whole subtree.
package limits

import (
	"strings"
)

// Limit is one selector's limit object. Unset fields do not limit.
type Limit struct {
	RequestsPerMinute *int64   `json:"requestsPerMinute,omitempty" minimum:"1" doc:"Admitted requests per minute window"`
	MaxConcurrent     *int64   `json:"maxConcurrent,omitempty" minimum:"1" doc:"Requests in flight at once"`
	CreditsPerDay     *float64 `json:"creditsPerDay,omitempty" minimum:"0" doc:"Credits charged per UTC day; only on credit-metered operations"`
}

// Set maps limit selectors to limits.
type Set map[string]Limit

// Covers reports whether selector sel applies to a request whose operation
// selectors (most general first) are ops. "*" covers every operation; an
// aggregate such as services.invoke.<svc> covers its exact refinements.
func Covers(sel string, ops []string) bool {
	if sel == "*" {
		return true
	}
	for _, op := range ops {
		if op == sel {
			return true
		}
	}
	return false
}

// SelectorCovers reports whether limit selector outer covers inner: equal,
// "*", or an aggregate prefix on a dot boundary (services.invoke covers
// services.invoke.cloud-superbrain covers services.invoke.cloud-superbrain.memory.write).
func SelectorCovers(outer, inner string) bool {
	if outer == "*" || outer == inner {
		return true
	}
	if outer == "services.invoke" || outer == "runs.create" || strings.Count(outer, ".") == 2 && (strings.HasPrefix(outer, "services.invoke.") || strings.HasPrefix(outer, "runs.create.")) {
		return strings.HasPrefix(inner, outer+".")
	}
	return false
}
