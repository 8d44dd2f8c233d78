package boltstore

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// sweepInterval paces physical deletion of expired items. Reads never depend
// on it; it only keeps write-once keys (rate windows, idempotency records)
// from growing the file forever.
const sweepInterval = 10 * time.Minute

// sweepBatch bounds one write transaction so a sweep never holds the writer
// lock for long.
const sweepBatch = 1000

func (s *Store) sweepLoop(every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.sweep()
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// sweep deletes expired items in batches until none are left. Errors are
// ignored on purpose: the next sweep retries, and reads filter anyway.
func (s *Store) sweep() {
	var from []byte
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		var next []byte
		var swept []string
		err := s.db.Update(func(tx *bolt.Tx) error {
			now := s.unix()
			b := tx.Bucket(itemsBucket)
			c := b.Cursor()
			var dead [][]byte
			n := 0
			for k, v := c.Seek(from); k != nil; k, v = c.Next() {
				if n == sweepBatch {
					next = append([]byte{}, k...)
					break
				}
				n++
				if it, err := decodeItem(v); err == nil && it.Expired(now) {
					dead = append(dead, append([]byte{}, k...))
				}
			}
			// Deleting through the cursor while it iterates can skip the
			// following key, so deletions wait until the scan is over.
			for _, k := range dead {
				swept = append(swept, string(k))
			}
			s.cache.begin(swept)
			for _, k := range dead {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		s.cache.end(swept)
		if err != nil || next == nil {
			return
		}
		from = next
	}
}
