package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
)

// An outage of any backing service, the key service included, is a 503
// with Retry-After, which clients and SDKs retry; never a 500.
func TestABackingServiceOutageIsA503WithRetryAfter(t *testing.T) {
	for _, cause := range []error{store.ErrUnavailable, blob.ErrUnavailable, queue.ErrUnavailable, envelope.ErrUnavailable} {
		e := ToAPIError(fmt.Errorf("doing something: %w", cause))
		if e.Status != http.StatusServiceUnavailable || e.Headers["Retry-After"] == "" {
			t.Errorf("%v: %d %v", cause, e.Status, e.Headers)
		}
		// The outage may come after part of the request took effect (a
		// service ran, its capture failed): the answer never claims that
		// nothing changed, and it names what makes a retry safe.
		if strings.Contains(strings.ToLower(e.Detail), "nothing") || !strings.Contains(e.Detail, "same Idempotency-Key") {
			t.Errorf("%v: %q claims nothing changed or does not name the retry that is safe", cause, e.Detail)
		}
	}
}
