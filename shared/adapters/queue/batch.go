package queue

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// Limits of SQS, part of the port so that every adapter refuses the same
// batches: nothing works locally that SQS would refuse.
const (
	maxBatch    = 10
	maxBodySize = 256 << 10
	maxDelay    = 15 * time.Minute
)

// CheckBatch validates a Send's messages against the port's limits.
func CheckBatch(msgs []Message) error {
	if len(msgs) == 0 || len(msgs) > maxBatch {
		return fmt.Errorf("queue: send 1 to %d messages, not %d", maxBatch, len(msgs))
	}
	for i, m := range msgs {
		if len(m.Body) > maxBodySize {
			return fmt.Errorf("queue: message %d: body over %d bytes", i, maxBodySize)
		}
		if !isText(m.Body) {
			return fmt.Errorf("queue: message %d: body must be text (UTF-8 without control characters other than tab and newlines)", i)
		}
		if m.Delay < 0 || m.Delay > maxDelay {
			return fmt.Errorf("queue: message %d: delay %v outside 0 to %v", i, m.Delay, maxDelay)
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
