package api

import (
	"fmt"
	"net/http"
	"testing"

	"platformapi/shared/blob"
	"platformapi/shared/envelope"
	"platformapi/shared/queue"
	"platformapi/shared/store"
)

// An outage of any backing service, the key service included, is a 503
// with Retry-After, which clients and SDKs retry; never a 500.
func TestABackingServiceOutageIsA503WithRetryAfter(t *testing.T) {
	for _, cause := range []error{store.ErrUnavailable, blob.ErrUnavailable, queue.ErrUnavailable, envelope.ErrUnavailable} {
		e := ToAPIError(fmt.Errorf("doing something: %w", cause))
		if e.Status != http.StatusServiceUnavailable || e.Headers["Retry-After"] == "" {
			t.Errorf("%v: %d %v", cause, e.Status, e.Headers)
		}
	}
}
