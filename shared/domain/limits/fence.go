package limits

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"

	"platformapi/shared/adapters/store"
)

// Fenced increments. A window's increment sent as one conditional write
// costs one write unit where a transaction costs two, but the SDK resends a
// write whose answer was lost after it applied, and a plain increment would
// then count twice. So the increment also sets a fence: an attribute of
// this process's own to a number it never used before, on the condition
// that the attribute is below that number. The resend fails that condition
// and finds the attribute at its own number, which the store answers as
// applied (store.Fence); a refusal finds it below. A fence
// attribute is written by one lane of one process, one write at a time and
// in increasing order, so a late copy of an old write can never pass it.
//
// Every fence stays in the window's item until the minute's item expires,
// and an item bills a write unit per KB. With fenceName's 10-byte names and
// numbers below 10^12 (7 bytes), an item of a selector up to 64 characters
// holds maxFences fences within 1 KB (TestAWindowItemHoldsMaxFencesInOneWriteUnit).
// The item counts its fences (fenceCountAttr): a write that adds one also
// adds to the count, on the condition that it is below maxFences. When
// that write is refused, the process counts on that shard in transactions
// (two units, no fence) for the rest of the minute; so beyond maxFences
// lanes on one shard in one minute a write costs two units again, as before
// fences, and the item never outgrows one unit.
const (
	fenceCountAttr = "nf"
	maxFences      = 48
)

// fences hands out this process's lanes: a lane is one fence attribute and
// its last number, used by one write at a time.
type fences struct {
	id   string
	mu   sync.Mutex
	free []*lane
	made int
}

type lane struct {
	attr string
	seq  int64
}

// newFenceID names a process by 48 random bits: two processes sharing a
// name on one item would be taken for each other's resends.
func newFenceID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (f *fences) take() *lane {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.free); n > 0 {
		l := f.free[n-1]
		f.free = f.free[:n-1]
		return l
	}
	f.made++
	return &lane{attr: fenceName(f.id, f.made-1)}
}

func (f *fences) put(l *lane) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.free = append(f.free, l)
}

// fenceName is the attribute of lane n of process id.
func fenceName(id string, n int) string {
	return "~" + id + strconv.FormatInt(int64(n), 36)
}

// countAlone sends a transaction's one window increment as a fenced
// conditional write. A refusal is a *store.TxError, as from Transact; when
// the write would have added a fence to the item (added), the refusal may
// also be the item's fences being full.
func (c *Counter) countAlone(ctx context.Context, minute int64, op store.Op) (added bool, err error) {
	l := c.fences.take()
	defer c.fences.put(l)
	l.seq++
	u, conds := op.Update, append(slices.Clip(op.Conds), store.Fence(l.attr, l.seq))
	u.Set = maps.Clone(u.Set)
	u.Set[l.attr] = l.seq
	added = !c.minute.hasFence(minute, op.Key, l.attr)
	if added {
		u.Add = maps.Clone(u.Add)
		u.Add[fenceCountAttr] = 1
		conds = append(conds, store.NumBelow(fenceCountAttr, maxFences))
	}
	_, err = c.requests.Update(ctx, op.Key, u, conds...)
	if errors.Is(err, store.ErrConditionFailed) {
		return added, &store.TxError{Index: 0}
	}
	if err == nil {
		c.minute.markFence(minute, op.Key, l.attr)
	}
	return added, err
}
