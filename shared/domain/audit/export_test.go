package audit

import (
	"encoding/json"
	"errors"
)

// SetMaxScan lowers the per-page scan budget for a test and restores it.
func SetMaxScan(n int) (restore func()) {
	old := maxScan
	maxScan = n
	return func() { maxScan = old }
}

// HoldFlushes keeps the recorder from committing anything until release:
// every event stays in its journal only.
func (r *Recorder) HoldFlushes() (release func()) {
	r.flushMu.Lock()
	return r.flushMu.Unlock
}

// Kill leaves the recorder as kill -9 leaves a process: what its journal's
// segments hold stays there uncommitted, and it records nothing more.
func (r *Recorder) Kill() {
	j := r.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.cur.f.Close()
	j.cur, j.pending, j.closed = nil, nil, nil
	j.err = errors.New("audit: killed")
}

// StopFlusher stops the recorder's goroutine: events then wait in the
// journal until a reader's (or Close's) Flush.
func (r *Recorder) StopFlusher() {
	r.stop()
	r.done.Wait()
}

// StoredDocuments are an event's stored document as the journal writes it
// and as encoding/json writes it.
func StoredDocuments(e Event) (appended, reflected []byte, err error) {
	reflected, err = json.Marshal(toStored(&e))
	return appendStored(nil, &e), reflected, err
}

// BlockEvents is how many events a block holds before another starts.
const BlockEvents = blockEvents

// FullBlockDeflate is the flusher's deflate of a full block (blockEvents
// events' documents, as the journal stores them) with newDeflater's
// deflaters: the function to time.
func FullBlockDeflate(newDeflater NewDeflater) func() ([]byte, error) {
	var blk block
	for i := range blockEvents {
		e := journalEvent(i)
		blk.add(blockDoc{id: e.ID, doc: appendStored(nil, &e)})
	}
	pool, err := deflaters(newDeflater)
	return func() ([]byte, error) {
		if err != nil {
			return nil, err
		}
		return blk.deflate(pool)
	}
}

// StandardDeflater is compress/flate's, the recorder's default.
var StandardDeflater NewDeflater = standardDeflater
