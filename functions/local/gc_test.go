package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTheCollectorSettingsApplyOnlyWhereTheEnvironmentIsSilent(t *testing.T) {
	for _, c := range []struct {
		name         string
		env          map[string]string
		wantPercent  int
		wantLimit    int64
		startPercent int
	}{
		{name: "neither set", wantPercent: gcPercent, wantLimit: gcMemoryLimit, startPercent: 100},
		{name: "GOGC set", env: map[string]string{"GOGC": "150"}, wantPercent: 150, wantLimit: gcMemoryLimit, startPercent: 150},
		{name: "GOMEMLIMIT set", env: map[string]string{"GOMEMLIMIT": "2GiB"}, wantPercent: gcPercent, wantLimit: math.MaxInt64, startPercent: 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			// The process's settings as the runtime read them at start
			// (the test sets the variables only afterwards).
			prevPercent := debug.SetGCPercent(c.startPercent)
			prevLimit := debug.SetMemoryLimit(math.MaxInt64)
			t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })

			tuneGC()
			if got := debug.SetGCPercent(c.startPercent); got != c.wantPercent {
				t.Errorf("GC percent %d, want %d", got, c.wantPercent)
			}
			if got := debug.SetMemoryLimit(-1); got != c.wantLimit {
				t.Errorf("memory limit %d, want %d", got, c.wantLimit)
			}
		})
	}
}
