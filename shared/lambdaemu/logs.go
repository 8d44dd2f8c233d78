package lambdaemu

import (
	"bytes"
	"sync"
)

// maxLogs bounds the captured output so a chatty function cannot exhaust
// the test's memory; tests read the start of the output, where init is.
const maxLogs = 1 << 20

// logBuffer collects a function's stdout and stderr, written concurrently.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := maxLogs - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
