package databasesapi_test

import (
	"sync"
	"testing"

	"platformapi/shared/harness/apitest"
)

// One writer wins, on every backend: of concurrent batches on one
// database, every 200 is a row that stays, and every other answer is a
// refusal that changed nothing (409 database_busy, retry), never a 500.
// A 503 promises only that a retry with the same Idempotency-Key completes
// or replays what the request did, so a writer answered 503 retries as a
// client would, and its last answer is the one held to the rule.
func TestConcurrentWritesAcknowledgeExactlyTheRowsThatStay(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		c, _ := setupFunded(t, e, 100) // every writer's hold covered at once
		count := func() int {
			r := e.Must(c.do("POST", "/query", map[string]any{"sql": "SELECT count(*) FROM t", "rowMode": "arrays"}), 200)
			return int(r.Body["rows"].([]any)[0].([]any)[0].(float64))
		}
		for round := range 3 {
			before := count()
			const writers = 16
			statuses := make([]int, writers)
			codes := make([]string, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := c.writeRetrying(actions(execute("INSERT INTO t(name) VALUES (?)", "w")))
					statuses[i] = r.Status
					if r.Status != 200 {
						codes[i] = r.Code()
					}
				}()
			}
			wg.Wait()
			ok := 0
			for i, s := range statuses {
				switch {
				case s == 200:
					ok++
				case s == 409 && codes[i] == "database_busy":
				case s == 408 && codes[i] == "query_timeout":
					// Its deadline passed while it waited on a busy
					// emulator: stopped, so it must have added nothing,
					// which the row count below holds it to.
				default:
					t.Errorf("round %d: writer %d answered %d %q", round, i, s, codes[i])
				}
			}
			if added := count() - before; added != ok {
				t.Errorf("round %d: %d rows added, %d writes acknowledged (statuses %v)", round, added, ok, statuses)
			}
			t.Logf("round %d: statuses %v", round, statuses)
		}
	}, withDatabases)
}

// writeRetrying sends a batch of actions under one Idempotency-Key, again
// after each 503 (a busy backend).
func (c caller) writeRetrying(body any) *apitest.Resp {
	c.e.T.Helper()
	return c.e.DoRetrying(c.req("POST", "/actions", body))
}
