package files

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"platformapi/shared/adapters/store"
)

// MinOrphanAge is the youngest object Sweep may take for an orphan. An
// upload writes its object before its record and a deferred commit comes
// at the end of the request, so a younger object may belong to an upload
// still in flight; no request lives an hour (Lambda stops at 15 minutes).
const MinOrphanAge = time.Hour

// sweepBatch is how many records one BatchGet asks for (the port's limit).
const sweepBatch = 100

// Sweep deletes the objects older than olderThan that no record owns: those
// of uploads whose process died (or whose transaction or deferred commit
// failed and whose cleanup failed too) between the object and the record,
// and those of deletions that died between the record and the object. It
// returns how many it deleted. Run it periodically; it walks the whole
// bucket prefix and reads the records in batches of 100.
func (r *Repo) Sweep(ctx context.Context, olderThan time.Duration) (int, error) {
	if olderThan < MinOrphanAge {
		return 0, fmt.Errorf("files: sweep: %v is younger than the minimum orphan age %v", olderThan, MinOrphanAge)
	}
	cutoff := r.now().Add(-olderThan)
	swept := 0
	type candidate struct {
		record store.Key
		object string
	}
	var batch []candidate
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		keys := make([]store.Key, len(batch))
		for i, c := range batch {
			keys[i] = c.record
		}
		found, err := r.st.BatchGet(ctx, keys)
		if err != nil {
			return fmt.Errorf("files: sweep: %w", err)
		}
		for _, c := range batch {
			if _, ok := found[c.record.String()]; ok {
				continue
			}
			if err := r.bucket.Delete(ctx, c.object); err != nil {
				return fmt.Errorf("files: sweep: %w", err)
			}
			swept++
		}
		batch = batch[:0]
		return nil
	}
	for e, err := range r.bucket.List(ctx, blobPrefix) {
		if err != nil {
			return swept, fmt.Errorf("files: sweep: %w", err)
		}
		accountID, projectID, id, ok := parseObjectKey(e.Key)
		if !ok || !e.Modified.Before(cutoff) {
			continue
		}
		batch = append(batch, candidate{recordKey(accountID, projectID, id), e.Key})
		if len(batch) == sweepBatch {
			if err := flush(); err != nil {
				return swept, err
			}
		}
	}
	return swept, flush()
}

// SweepPass is the scheduled pass (SweeperFunction): it takes the
// objects older than MinOrphanAge. A failed sweep is retried at the next
// tick: what it did not delete, the next one finds.
func (r *Repo) SweepPass(logger *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		n, err := r.Sweep(ctx, MinOrphanAge)
		logger.Info("file sweep", "swept", n)
		return err
	}
}
