package main

import (
	"os"
	"runtime/debug"
)

// The local server collects garbage at GOGC 400 under a 1 GiB soft memory
// limit, unless the environment sets GOGC or GOMEMLIMIT (which then win).
// Its live heap is small (about 30 MB with the development chain) and every
// request allocates, so at Go's default of 100 it collects about twenty times
// a second under load, and marking is a fifth of an audited read's CPU
// (docs/benchmarks.md, "The collector's target"). At 400 the heap may grow
// to five times the live one before a cycle, about 150 MB here; the soft
// limit makes the collector work harder before the heap passes 1 GiB, so a
// larger live heap does not multiply by five unchecked.
const (
	gcPercent     = 400
	gcMemoryLimit = 1 << 30
)

// tuneGC applies the local server's collector settings where the
// environment leaves them unset.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(gcMemoryLimit)
	}
}
