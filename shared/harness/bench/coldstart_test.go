package bench

import (
	"context"
	"testing"
	"time"
)

// A cold start is measured under AWS's runtime interface emulator: the
// function is built for the host, started, invoked once, and both the init
// phase (INIT REPORT) and the first request (REPORT Duration, which
// includes the init) are read from the emulator's log, within Lambda's
// init limit.
func TestColdStartsAreTheEmulatorsInitAndFirstInvocation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a function and runs the emulator")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	env, _, cleanup, err := coldStartEnv(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	inits, firsts, err := coldStarts(context.Background(), root, t.TempDir(), []string{"projects"}, 2, env)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]map[string][]time.Duration{"init": inits, "first request": firsts} {
		d := m["projects"]
		if len(d) != 2 || d[0] <= 0 || d[1] > 10*time.Second || d[0] > d[1] {
			t.Errorf("%s durations %v, want two sorted, each within Lambda's 10 s", name, d)
		}
	}
	if i, f := inits["projects"], firsts["projects"]; len(i) == 2 && len(f) == 2 && f[0] < i[0] {
		t.Errorf("first requests %v shorter than the inits %v they include", f, i)
	}
	t.Logf("init %v, first request %v", inits["projects"], firsts["projects"])
}
