// Package fastdeflate is the local process's deflater for the embedded audit
// store's blocks (audit.WithDeflater): klauspost/compress's flate, the same
// format at the same level, read back by compress/flate's inflater.
//
// audit's BenchmarkBlockDeflate (a full block, 64 events), 2026-11-29:
// median 257 -> 104 us a block in 6 runs of each at load average 22-24, and
// 62 -> 38 us in 10 runs of each at load average 9, 1.80-1.82 KB out
// against 1.74-1.77 KB. It adds about 120 KB to a binary, so only
// functions/local (and its bench) links it: the Lambda functions never
// write a block, and the databases function's bootstrap is at its cap
// (lambdatest's TestBootstrapsStayWithinTheirCaps).
package fastdeflate

import (
	"github.com/klauspost/compress/flate"

	"platformapi/shared/domain/audit"
)

// New is a deflater at a compress/flate level (audit.NewDeflater).
func New(level int) (audit.Deflater, error) { return flate.NewWriter(nil, level) }
