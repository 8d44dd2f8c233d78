package memqueue

import (
	"fmt"
	"time"
	"unicode/utf8"

	"platformapi/shared/queue"
)

// Limits of SQS, enforced here too so that nothing works locally that the
// AWS adapter would refuse.
const (
	maxBatch    = 10
	maxBodySize = 256 << 10
	maxDelay    = 15 * time.Minute
)

func checkBatch(msgs []queue.Message) error {
	if len(msgs) == 0 || len(msgs) > maxBatch {
		return fmt.Errorf("memqueue: send 1 to %d messages, not %d", maxBatch, len(msgs))
	}
	for i, m := range msgs {
		if len(m.Body) > maxBodySize {
			return fmt.Errorf("memqueue: message %d: body over %d bytes", i, maxBodySize)
		}
		if !isText(m.Body) {
			return fmt.Errorf("memqueue: message %d: body must be text (UTF-8 without control characters other than tab and newlines)", i)
		}
		if m.Delay < 0 || m.Delay > maxDelay {
			return fmt.Errorf("memqueue: message %d: delay %v outside 0 to %v", i, m.Delay, maxDelay)
		}
	}
	return nil
}

// isText reports whether SQS accepts b as a message body.
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}
