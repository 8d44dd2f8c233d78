// Package fastdeflate is the local process's deflater for the embedded audit
// store's blocks (audit.WithDeflater): klauspost/compress's flate, the same
// format at the same level, read back by compress/flate's inflater.
//
// BenchmarkBlockDeflate (64 events, in this package's tests beside
// compress/flate's), 2026-11-29, 6 alternating runs at load average 22-24:
// median 257 -> 104 us a block, about 1.8 KB out either way. It adds about
// 120 KB to a binary, so only functions/local (and its bench) links it: the
// Lambda functions never write a block, and the databases function's
// bootstrap is at its cap (lambdatest's TestBootstrapsStayWithinTheirCaps).
package fastdeflate

import (
	"github.com/klauspost/compress/flate"

	"platformapi/shared/domain/audit"
)

// New is a deflater at a compress/flate level (audit.NewDeflater).
func New(level int) (audit.Deflater, error) { return flate.NewWriter(nil, level) }
