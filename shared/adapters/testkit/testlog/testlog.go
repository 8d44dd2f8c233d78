// Package testlog is a log sink for tests of code that logs from several
// goroutines at once (workers, the local server), which a bytes.Buffer
// alone would race on.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it; it is safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
