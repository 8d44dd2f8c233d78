package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"platformapi/shared/harness/apitest"
	"testing"
	"time"

	"platformapi/shared/domain/idempotency"
)

// claimDeadProcess claims an Idempotency-Key as a request would, then never
// completes it: the process "died" mid-request.
func claimDeadProcess(t *testing.T, e *apitest.Env, keyID, idemKey, path string, body any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	store := idempotency.New(e.Store, e.Sealer, e.Clock.Now, 15*time.Second)
	fp := idempotency.Fingerprint("POST", path, raw, http.Header{"Content-Type": {"application/json"}})
	if _, _, err := store.Claim(context.Background(), keyID, idemKey, fp); err != nil {
		t.Fatal(err)
	}
}
