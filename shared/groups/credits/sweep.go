package credits

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"platformapi/shared/adapters/store"
)

// Open holds are indexed so that the sweeper finds those a crash orphaned
// without scanning the table: one small item per held hold, written in the
// transaction that takes it and deleted in the one that ends it, in a
// partition of the hour of its deadline, spread over shards so that a busy
// hour does not make one hot partition: taking and ending a hold write its
// shard 4 units (a put and a delete in transactions), so 32 shards carry
// 8,000 charged calls a second platform-wide at DynamoDB's 1,000 write
// units a partition (8 carried 2,000, under one busy account's 3,000):
//
//	holds#<yyyymmddhh>#<shard 0-31> | <deadline unix, 12 digits>#<account>#<hold>   acct, hold, amount
//	holds#sweep | cursor                                                           hour: every bucket before it is empty
const (
	attrDeadline = "deadline"
	// OpenHoldShards is how many partitions an hour of open holds spans.
	OpenHoldShards = 32
	// GraceAfterDeadline is how long after its holder's deadline a hold is
	// left alone: a request or call past its deadline has failed or ended
	// by then, so a hold still held was orphaned by a crash.
	GraceAfterDeadline = 10 * time.Minute
	// SweepLookback is how far back the first sweep looks (no cursor yet):
	// deadlines are at most seconds old when a hold is taken.
	SweepLookback = 24 * time.Hour
)

var sweepCursor = store.Key{PK: "holds#sweep", SK: "cursor"}

func bucketPK(hour int64, shard uint32) string {
	return "holds#" + time.Unix(hour*3600, 0).UTC().Format("2006010215") + "#" + strconv.FormatUint(uint64(shard), 10)
}

// OpenHoldShard is the index shard of a hold (a hash of its id). An index
// entry an end computes elsewhere (written under another shard count) is
// left to the sweeper, which deletes it when it finds its hold ended.
func OpenHoldShard(holdID string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(holdID))
	return h.Sum32() % OpenHoldShards
}

func openHoldKey(accountID, holdID string, deadline time.Time) store.Key {
	return store.Key{
		PK: bucketPK(deadline.Unix()/3600, OpenHoldShard(holdID)),
		SK: fmt.Sprintf("%012d#%s#%s", max(deadline.Unix(), 0), accountID, holdID),
	}
}

func openHoldItem(accountID, holdID string, amountMicro int64, deadline time.Time) store.Item {
	it := store.NewItem(openHoldKey(accountID, holdID, deadline))
	it["acct"] = accountID
	it["hold"] = holdID
	it["amount"] = amountMicro
	return it
}

// SweepHolds releases, with their ledger entries, the holds still held
// grace after their deadline: a crash between taking a hold and ending it
// left them, their amount kept from the balance. It visits only the index
// buckets from its cursor to the cutoff's hour, and moves the cursor past
// the hours it emptied. Each release is conditional on the hold being held,
// so a hold its owner ends meanwhile, or one a concurrent sweep releases,
// is left as it is: sweeps are idempotent and safe to run concurrently. A
// resting trading order's hold has the order's expiry as its deadline, so
// it is never released while the order may still fill. It returns how many
// holds it released.
func (l *Ledger) SweepHolds(ctx context.Context, grace time.Duration) (int, error) {
	cutoff := l.now().Add(-grace)
	last := cutoff.Unix() / 3600
	first := cutoff.Add(-SweepLookback).Unix() / 3600
	cur, err := l.st.Get(ctx, sweepCursor)
	switch {
	case err == nil:
		first = cur.Int("hour")
	case !errors.Is(err, store.ErrNotFound):
		return 0, fmt.Errorf("credits: read sweep cursor: %w", err)
	}
	released := 0
	var errs []error
	for hour := first; hour <= last; hour++ {
		for shard := range uint32(OpenHoldShards) {
			n, err := l.sweepBucket(ctx, bucketPK(hour, shard), cutoff)
			released += n
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	// Hours before the cutoff's own hour hold only deadlines past the
	// cutoff, all released above; new holds take deadlines after now. An
	// hour of slack covers clocks that differ between processes.
	if next := last - 1; len(errs) == 0 && next > first {
		_, err := l.st.Update(ctx, sweepCursor, store.Update{Set: map[string]any{"hour": next}}, store.NumBelow("hour", next))
		if err != nil && !errors.Is(err, store.ErrConditionFailed) {
			errs = append(errs, fmt.Errorf("credits: move sweep cursor: %w", err))
		}
	}
	return released, errors.Join(errs...)
}

// sweepBucket releases the bucket's holds whose deadline is at or before
// cutoff, in deadline order.
func (l *Ledger) sweepBucket(ctx context.Context, pk string, cutoff time.Time) (int, error) {
	released := 0
	after := ""
	for {
		page, err := l.st.Query(ctx, store.Query{PK: pk, After: after, Limit: 100})
		if err != nil {
			return released, fmt.Errorf("credits: sweep %s: %w", pk, err)
		}
		for _, it := range page.Items {
			after = it.Key().SK
			secs, _, _ := strings.Cut(after, "#")
			deadline, err := strconv.ParseInt(secs, 10, 64)
			if err != nil {
				return released, fmt.Errorf("credits: sweep %s: malformed entry %q", pk, after)
			}
			if deadline > cutoff.Unix() {
				return released, nil
			}
			h := l.HoldOf(it.String("acct"), it.String("hold"), it.Int("amount"), time.Unix(deadline, 0))
			switch err := h.Release(SettledBy(ctx, "credits.holds.expire")); {
			case err == nil:
				released++
			case errors.Is(err, ErrHoldEnded):
				// Ended meanwhile by its owner or another sweep, whose
				// transaction removed this entry too; one left by an end
				// that named another deadline goes now.
				if err := l.st.Delete(ctx, it.Key()); err != nil {
					return released, fmt.Errorf("credits: sweep %s: %w", pk, err)
				}
			default:
				return released, err
			}
		}
		if !page.More {
			return released, nil
		}
	}
}

// SweepPass is the scheduled pass (SweeperFunction): it releases the holds
// older than grace past their deadline, and cuts every sliced account's
// ledger so that its intervals stay short whether or not anyone reads it.
// A failed pass is retried at the next tick, from the cursor this one left.
func (l *Ledger) SweepPass(grace time.Duration, logger *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		n, err := l.SweepHolds(ctx, grace)
		if err != nil {
			return fmt.Errorf("hold sweep (%d released): %w", n, err)
		}
		if n > 0 {
			logger.Info("hold sweep", "released", n)
		}
		return l.CutSliced(ctx)
	}
}

// CutSliced cuts the ledger of every sliced account (cuts.go); an account
// whose slices did not move since its last cut costs one snapshot and no
// write.
func (l *Ledger) CutSliced(ctx context.Context) error {
	var errs []error
	after := ""
	for {
		page, err := l.st.Query(ctx, store.Query{PK: slicedKey("").PK, After: after, Limit: 100})
		if err != nil {
			return fmt.Errorf("credits: sliced accounts: %w", err)
		}
		for _, it := range page.Items {
			after = it.Key().SK
			if _, err := l.Cut(ctx, after); err != nil {
				errs = append(errs, fmt.Errorf("credits: cut %s: %w", after, err))
			}
		}
		if !page.More {
			return errors.Join(errs...)
		}
	}
}
