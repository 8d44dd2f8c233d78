package testlog_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"platformapi/shared/adapters/testkit/testlog"
)

// Lines written from many goroutines at once all arrive whole (run with
// -race to see the point of the lock).
func TestConcurrentWritersLoseNoLine(t *testing.T) {
	var b testlog.Buffer
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(&b, "line %02d\n", i)
		}()
	}
	wg.Wait()
	got := b.String()
	for i := range 16 {
		if !strings.Contains(got, fmt.Sprintf("line %02d\n", i)) {
			t.Fatalf("line %d missing from %q", i, got)
		}
	}
}
