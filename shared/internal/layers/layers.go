// Package layers declares which way the packages of shared may import each
// other, in one table (Rules) that its test holds the code to: a package
// imports only its own layer or a lower one, and no two units (top-level
// folders of shared, and each group's folder under shared/groups) import
// each other, however indirectly. The table places packages by path
// patterns, not by a list of packages, so a new group needs no rule and a
// moved folder needs a rule changed, not a list rewritten.
package layers

import (
	"fmt"
	"path"
	"strings"
)

// Layer is a rank in the import order, lowest first.
type Layer int

const (
	// Base is the libraries that know nothing of the platform: errors,
	// ids, decimals, JSON and log formats, the route and catalogue tables.
	Base Layer = iota
	// Adapters is storage, queues, blobs, keys and outside services (the
	// interfaces with their embedded and AWS implementations), the AWS
	// environment, and the ports and declarations a process hands every
	// group.
	Adapters
	// Domain is the rules of each group and the mechanisms they share
	// (idempotency, paging, limits), free of HTTP.
	Domain
	// Kernel is the HTTP kernel every group registers on (shared/api).
	Kernel
	// Groups is each group's HTTP package (its *api package): above its
	// domain package, which must never reach for it.
	Groups
	// Assembly is the list of every group (shared/platform).
	Assembly
	// EntryPoints is what runs: the local process, the Lambda edges, the
	// black-box test harness, the benchmarks, the soak and the generators.
	EntryPoints
)

var layerNames = [...]string{"base", "adapters", "domain", "kernel", "groups", "assembly", "entry points"}

func (l Layer) String() string { return layerNames[l] }

// Rule places every package whose path under shared/ starts with Pattern
// in Layer. A pattern is matched segment by segment with path.Match, so
// "api/*api" is every group's HTTP package and "groups/*/*api" would be
// the same below shared/groups. Where several rules match, the one with
// the most segments wins, then the one with the fewest wildcards.
type Rule struct {
	Pattern string
	Layer   Layer
}

// Rules is the layer order. A new top-level folder needs a rule here
// (the test refuses a package no rule places, and a rule that places
// nothing).
var Rules = []Rule{
	{"base", Base}, {"console", Base},
	{"adapters/testkit/testclock", Base}, {"adapters/testkit/testlog", Base},
	{"groups/credits/credittoken", Base}, {"groups/webhooks/eventdef", Base},

	{"adapters", Adapters}, {"groups/credits/x402", Adapters},

	{"domain", Domain},
	// A group's folder holds its domain (the folder itself and its
	// subfolders) and, one level down, its HTTP package.
	{"groups", Domain},

	{"api", Kernel},

	{"groups/*/*api", Groups},

	{"platform", Assembly},

	{"app", EntryPoints}, {"harness", EntryPoints}, {"internal", EntryPoints}, {"lambdaedge", EntryPoints},
	{"groups/databases/databasesapi/dbtest", EntryPoints},
}

// Containers are the top-level folders whose subfolders are each a unit
// of the cycle check of their own (shared/groups/<name>, shared/base/ids),
// rather than one unit together: the folder of a layer holds packages that
// must not import each other both ways either.
var Containers = []string{"adapters", "base", "domain", "groups", "harness"}

// Place is the layer of the package at rel (its path under shared/) by
// rules, with the rule that placed it.
func Place(rules []Rule, rel string) (Rule, error) {
	var best Rule
	bestSegs, bestWild, tied := -1, 0, false
	for _, r := range rules {
		if !matches(r.Pattern, rel) {
			continue
		}
		segs, wild := strings.Count(r.Pattern, "/")+1, strings.Count(r.Pattern, "*")
		switch {
		case segs > bestSegs || segs == bestSegs && wild < bestWild:
			best, bestSegs, bestWild, tied = r, segs, wild, false
		case segs == bestSegs && wild == bestWild:
			tied = true
		}
	}
	switch {
	case bestSegs < 0:
		return Rule{}, fmt.Errorf("no rule places %s", rel)
	case tied:
		return Rule{}, fmt.Errorf("two rules as specific as %q place %s", best.Pattern, rel)
	}
	return best, nil
}

func matches(pattern, rel string) bool {
	pat, segs := strings.Split(pattern, "/"), strings.Split(rel, "/")
	if len(pat) > len(segs) {
		return false
	}
	for i, p := range pat {
		if ok, _ := path.Match(p, segs[i]); !ok {
			return false
		}
	}
	return true
}

// Unit is the folder the cycle check counts rel (a path under shared/)
// in: its top-level folder, or a container's subfolder, whose HTTP package
// (its *api folder) is a unit of its own: a group's domain sits below the
// kernel and its HTTP package above it, so counted as one they would seem
// to import each other through the kernel.
func Unit(containers []string, rel string) string {
	segs := strings.SplitN(rel, "/", 4)
	for _, c := range containers {
		switch {
		case segs[0] != c || len(segs) < 2:
		case len(segs) > 2 && strings.HasSuffix(segs[2], "api"):
			return strings.Join(segs[:3], "/")
		default:
			return segs[0] + "/" + segs[1]
		}
	}
	return segs[0]
}
