package limits

import "testing"

func TestSelectorCoverage(t *testing.T) {
	for _, tc := range []struct {
		outer, inner string
		want         bool
	}{
		{"*", "projects.list", true},
		{"projects.list", "projects.list", true},
		{"projects.list", "projects.read", false},
		{"services.invoke", "services.invoke.cloud-superbrain", true},
		{"services.invoke", "services.invoke.cloud-superbrain.memory.write", true},
		{"services.invoke.cloud-superbrain", "services.invoke.cloud-superbrain.memory.write", true},
		{"services.invoke.cloud-superbrain", "services.invoke.cloud-superbrainx.memory.write", false},
		{"services.invoke.cloud-superbrain.memory.write", "services.invoke.cloud-superbrain.memory.delete", false},
		{"runs.create", "runs.create.core-research.research.query", true},
		{"projects", "projects.list", false},
	} {
		if got := SelectorCovers(tc.outer, tc.inner); got != tc.want {
			t.Errorf("SelectorCovers(%q, %q) = %v, want %v", tc.outer, tc.inner, got, tc.want)
		}
	}
}
