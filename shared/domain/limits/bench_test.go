package limits_test

import (
	"testing"

	"platformapi/shared/domain/limits"
)

// The limit selector checks run for every limit of every key in the chain
// on every request (Covers) and for every pair of limits at key creation
// (SelectorCovers): the micro-benchmarks of selector coverage.

func BenchmarkSelectorCovers(b *testing.B) {
	for _, c := range []struct{ name, outer, inner string }{
		{"Star", "*", "projects.list"},
		{"Equal", "projects.list", "projects.list"},
		{"Aggregate", "services.invoke.cloud-superbrain", "services.invoke.cloud-superbrain.memory.write"},
		{"Miss", "services.invoke.cloud-superbrain", "services.invoke.core-research.research.query"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				limits.SelectorCovers(c.outer, c.inner)
			}
		})
	}
}

func BenchmarkCovers(b *testing.B) {
	// An invoke request's selectors, most general first, as
	// keys.LimitSelectors gives them.
	ops := []string{"services.invoke", "services.invoke.cloud-superbrain", "services.invoke.cloud-superbrain.memory.write"}
	for _, c := range []struct{ name, sel string }{
		{"Star", "*"},
		{"Exact", "services.invoke.cloud-superbrain.memory.write"},
		{"Miss", "projects.create"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				limits.Covers(c.sel, ops)
			}
		})
	}
}
