package layers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const prefix = "platformapi/shared/"

// imports is, for every package under shared/, the packages under shared/
// it imports, by path under shared/. Only what the packages themselves
// import: a test may reach up (a domain test through the black-box harness)
// since nothing imports a test.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Error", prefix+"...")
	cmd.Env = os.Environ()
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		rel := strings.TrimPrefix(p.ImportPath, prefix)
		graph[rel] = nil
		for _, imp := range p.Imports {
			if dep, ok := strings.CutPrefix(imp, prefix); ok {
				graph[rel] = append(graph[rel], dep)
			}
		}
	}
	return graph
}

// unitCycles are the groups of units (Unit) that import each other,
// directly or not, each with the package imports that join them, sorted.
func unitCycles(graph map[string][]string, containers []string) [][]string {
	edges := map[[2]string][]string{}
	next := map[string][]string{}
	for src, deps := range graph {
		for _, dep := range deps {
			e := [2]string{Unit(containers, src), Unit(containers, dep)}
			if e[0] == e[1] {
				continue
			}
			if edges[e] == nil {
				next[e[0]] = append(next[e[0]], e[1])
			}
			edges[e] = append(edges[e], src+" -> "+dep)
		}
	}
	var out [][]string
	for _, comp := range components(next) {
		var lines []string
		for _, a := range comp {
			for _, b := range comp {
				if imps := edges[[2]string{a, b}]; imps != nil {
					slices.Sort(imps)
					lines = append(lines, fmt.Sprintf("%s -> %s: %s", a, b, strings.Join(imps, ", ")))
				}
			}
		}
		slices.Sort(lines)
		out = append(out, lines)
	}
	return out
}

// components are the strongly connected components of more than one node
// (Tarjan).
func components(next map[string][]string) [][]string {
	index, low, onStack := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range next[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		if len(comp) > 1 {
			sort.Strings(comp)
			out = append(out, comp)
		}
	}
	nodes := make([]string, 0, len(next))
	for v := range next {
		nodes = append(nodes, v)
	}
	sort.Strings(nodes)
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return out
}

func TestTopLevelFoldersOfSharedImportEachOtherOneWay(t *testing.T) {
	for _, cycle := range unitCycles(imports(t), Containers) {
		t.Errorf("these folders import each other; move the package on the wrong side:\n\t%s", strings.Join(cycle, "\n\t"))
	}
}

func TestNoPackageImportsAPackageOfAHigherLayer(t *testing.T) {
	graph := imports(t)
	used := map[string]bool{}
	place := func(rel string) (Rule, bool) {
		r, err := Place(Rules, rel)
		if err != nil {
			t.Error(err)
			return r, false
		}
		used[r.Pattern] = true
		return r, true
	}
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, src := range pkgs {
		from, ok := place(src)
		if !ok {
			continue
		}
		for _, dep := range graph[src] {
			if to, ok := place(dep); ok && to.Layer > from.Layer {
				t.Errorf("%s (%s, by %q) imports %s (%s, by %q)", src, from.Layer, from.Pattern, dep, to.Layer, to.Pattern)
			}
		}
	}
	for _, r := range Rules {
		if !used[r.Pattern] {
			t.Errorf("rule %q places no package; drop or fix it", r.Pattern)
		}
	}
}

func TestTheMostSpecificRulePlacesAPackage(t *testing.T) {
	rules := []Rule{
		{"groups", Domain}, {"groups/*/*api", Groups}, {"groups/*/*test", EntryPoints},
		{"api", Kernel}, {"api/*api", Groups}, {"api/apitest", EntryPoints},
		{"x/*", Base}, {"x/y", Adapters}, {"z/*", Base}, {"z/w*", Adapters},
	}
	for _, c := range []struct {
		rel     string
		pattern string
		err     bool
	}{
		{rel: "groups/wallets", pattern: "groups"},
		{rel: "groups/wallets/policy", pattern: "groups"},
		{rel: "groups/wallets/walletsapi", pattern: "groups/*/*api"},
		{rel: "groups/wallets/walletsapi/sub", pattern: "groups/*/*api"},
		{rel: "api", pattern: "api"},
		{rel: "api/creditsapi", pattern: "api/*api"},
		{rel: "api/apitest/dbtest", pattern: "api/apitest"},
		{rel: "x/y", pattern: "x/y"},
		{rel: "x/q", pattern: "x/*"},
		{rel: "nothing", err: true},
		{rel: "groups/a/bapitest", pattern: "groups/*/*test"},
		{rel: "z/wq", err: true},
	} {
		got, err := Place(rules, c.rel)
		if c.err != (err != nil) || !c.err && got.Pattern != c.pattern {
			t.Errorf("Place(%s) = %q, %v; want %q (error %v)", c.rel, got.Pattern, err, c.pattern, c.err)
		}
	}
}

func TestAContainersSubfoldersAreUnitsOfTheirOwn(t *testing.T) {
	for rel, want := range map[string]string{
		"store/dynamostore":          "store",
		"api/creditsapi":             "api",
		"groups/wallets/policy":      "groups/wallets",
		"groups/wallets":             "groups/wallets",
		"groups/wallets/walletsapi":  "groups/wallets/walletsapi",
		"groups":                     "groups",
		"groupsx/wallets/walletsapi": "groupsx",
	} {
		if got := Unit([]string{"groups"}, rel); got != want {
			t.Errorf("Unit(%s) = %s, want %s", rel, got, want)
		}
	}
}

func TestACycleIsReportedWithTheImportsThatCloseIt(t *testing.T) {
	graph := map[string][]string{
		"a":             {"b/x"},
		"b/x":           {"c"},
		"c":             {"a"},
		"d":             {"a"},
		"groups/g/gapi": {"groups/h"},
		"groups/h":      {"d"},
	}
	got := unitCycles(graph, []string{"groups"})
	want := [][]string{{"a -> b: a -> b/x", "b -> c: b/x -> c", "c -> a: c -> a"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cycles = %q, want %q", got, want)
	}
}
