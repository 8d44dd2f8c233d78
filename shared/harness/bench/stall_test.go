package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/domain/audit"
)

// A probe taken around an embedded recorder's work times each of its
// steps: the request's journal write, the syncer's fsync and the flusher's
// commit. The syncer and the flusher run on their own tickers, so the probe
// waits for them rather than for a load of some length.
func TestTheStallProbeTimesTheRecordersWritesSyncsAndCommits(t *testing.T) {
	dir := t.TempDir()
	st, err := boltstore.Open(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec, err := audit.NewEmbeddedRecorder(st, nil, filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	timings := rec.Timings()
	probe := startStalls(timings)
	e := audit.Event{RequestID: "req_0123456789abcdef01234567", AccountID: "acct_1", KeyPath: []string{"key_1"},
		Operation: "credits.balance.read", Method: "GET", Path: "/v1/credits/balance", Status: 200}
	if err := rec.Record(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); timings.Commit.Snapshot().Count() == 0 || timings.Sync.Snapshot().Count() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no fsync and commit of the journal after 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := probe.stop()
	if got.JournalAppendWriteMax <= 0 || got.JournalSyncMax <= 0 || got.FlushCommits == 0 || got.FlushCommitMax <= 0 {
		t.Errorf("stalls %+v, want the journal's write, its fsync and the flusher's commit timed", got)
	}
	if again := startStalls(timings).stop(); again.JournalAppendWriteMax != 0 {
		t.Errorf("a probe around no request timed a journal write: %+v", again)
	}
}
