package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/ids"
	"platformapi/shared/base/routes"
	"platformapi/shared/domain/paging"
)

// Filter selects audit events for a viewer. Since is inclusive, Until
// exclusive, both kept to the millisecond; zero KeyID, Operation and Status
// select everything. Operation matches exactly, or covers refinements when
// it is an aggregate (services.invoke covers services.invoke.<svc>.<op>).
type Filter struct {
	Viewer
	Since, Until time.Time
	KeyID        string
	Operation    string
	Status       int
	Limit        int
	Cursor       string
}

// ListQuery is GET /audit-events's query as sent: the HTTP layer passes the
// strings through and ParseListQuery validates them.
type ListQuery struct {
	Since, Until string // RFC 3339; defaults: the retention window ending now
	KeyID        string
	Operation    string
	Status       string
	Limit        int // 0: DefaultLimit
	Cursor       string
}

// DefaultLimit and MaxLimit bound a page of events, as they bound every list.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// ParseListQuery turns the query into a Filter for v, or a validation_failed
// error naming the parameter (query.since, query.status, ...).
func ParseListQuery(v Viewer, q ListQuery, now time.Time) (Filter, error) {
	f := Filter{Viewer: v, KeyID: q.KeyID, Operation: q.Operation, Limit: q.Limit, Cursor: q.Cursor}
	var bad []apierr.FieldError
	var err error
	f.Until = now
	if q.Until != "" {
		if f.Until, err = time.Parse(time.RFC3339Nano, q.Until); err != nil {
			bad = append(bad, apierr.Field("query.until", "an RFC 3339 time, e.g. 2026-01-02T03:04:05Z"))
		}
	}
	f.Since = f.Until.Add(-Retention)
	if q.Since != "" {
		if f.Since, err = time.Parse(time.RFC3339Nano, q.Since); err != nil {
			bad = append(bad, apierr.Field("query.since", "an RFC 3339 time, e.g. 2026-01-02T03:04:05Z"))
		}
	}
	if q.Status != "" {
		if f.Status, err = strconv.Atoi(q.Status); err != nil {
			bad = append(bad, apierr.Field("query.status", "an HTTP status code, 100 to 599"))
			f.Status = 0
		}
	}
	if len(bad) > 0 {
		return Filter{}, apierr.Invalid("Invalid audit event filter.", bad...)
	}
	return f, f.validate()
}

// validate checks a filter built in code as ParseListQuery checks a query.
func (f *Filter) validate() error {
	var bad []apierr.FieldError
	bad = append(bad, checkRange("query.since", "query.until", f.Since, f.Until)...)
	if f.KeyID != "" && !ids.Valid("key", f.KeyID) {
		bad = append(bad, apierr.Field("query.keyId", "a key id (key_…)"))
	}
	if f.Operation != "" && !knownOperation(f.Operation) {
		bad = append(bad, apierr.Field("query.operation", "no operation %q", f.Operation))
	}
	if f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		bad = append(bad, apierr.Field("query.status", "an HTTP status code, 100 to 599"))
	}
	if f.Limit == 0 {
		f.Limit = DefaultLimit
	}
	if f.Limit < 1 || f.Limit > MaxLimit {
		bad = append(bad, apierr.Field("query.limit", "1 to %d", MaxLimit))
	}
	if len(bad) > 0 {
		return apierr.Invalid("Invalid audit event filter.", bad...)
	}
	return nil
}

// checkRange: from before to, at most the retention apart.
func checkRange(fromName, toName string, from, to time.Time) []apierr.FieldError {
	if !from.Before(to) {
		return []apierr.FieldError{apierr.Field(fromName, "must be before %s", strings.TrimPrefix(toName, "query."))}
	}
	if to.Sub(from) > Retention {
		return []apierr.FieldError{apierr.Field(fromName, "at most 90 days before %s", strings.TrimPrefix(toName, "query."))}
	}
	return nil
}

// Settlements are the operations of the events no request made: a charge
// settled later, or a durable run's step, shown to the key that caused it
// (docs/credits.md).
var Settlements = []string{
	"trading.orders.fill", "trading.orders.release",
	"wallets.transactions.confirm", "wallets.transactions.release",
	"credits.holds.expire", "credits.holds.settle", "runs.execute",
}

// knownOperation: an operation id of the route table, or a refinement of an
// aggregate to a catalogue service (services.invoke.<svc>) or one of its
// operations (services.invoke.<svc>.<op>); the same for runs.create.
func knownOperation(op string) bool {
	if routes.IsOperation(op) || slices.Contains(Settlements, op) {
		return true
	}
	for _, root := range []string{"services.invoke", "runs.create"} {
		rest, ok := strings.CutPrefix(op, root+".")
		if !ok {
			continue
		}
		svcID, opID, hasOp := strings.Cut(rest, ".")
		svc, found := catalog.Lookup(svcID)
		if !found {
			return false
		}
		if !hasOp {
			return true
		}
		o, found := svc.Op(opID)
		return found && (root == "services.invoke" && o.Invocable || root == "runs.create" && o.Durable)
	}
	return false
}

// matches applies the filter's own conditions (the range is the scan's).
func (f *Filter) matches(e *Event) bool {
	return f.sees(e.KeyPath, projectOf(e)) &&
		(f.KeyID == "" || e.KeyID == f.KeyID) &&
		(f.Status == 0 || e.Status == f.Status) &&
		(f.Operation == "" || OperationCovers(f.Operation, e.Operation))
}

// OperationCovers reports whether a filter on operation filter selects op:
// the same, or a refinement of it (services.invoke covers
// services.invoke.<svc>.<op>).
func OperationCovers(filter, op string) bool {
	return op == filter || strings.HasPrefix(op, filter+".")
}

// maxScan bounds the events one page reads while filtering. A page that
// reaches it ends early, possibly short or empty, with a cursor to go on:
// a narrow filter over a busy account costs bounded work per request.
var maxScan = 1000

// lowestID is the smallest event id at t: ids put the millisecond time in
// the first 10 body characters and random bits in the other 16.
func lowestID(t time.Time) string {
	id := ids.New("aud", t)
	return id[:len("aud_")+10] + "0000000000000000"
}

// List returns a page of the events f selects, newest first, and the cursor
// of the next page ("" at the end).
//
// Each day of the range is Shards partitions sorted by id; a k-way merge
// over the shards of the newest days takes the newest head until the page
// is full, widening to older days as needed (see maxSpan). The cursor is the
// day and id of the last event read: ids are unique and the merge is in id
// order, so every event of every shard above that id has been read, and one
// position serves all shards.
func (r *Repo) List(ctx context.Context, f Filter) ([]Event, string, error) {
	if err := f.check(); err != nil {
		return nil, "", err
	}
	if err := f.validate(); err != nil {
		return nil, "", err
	}
	if err := r.settle(ctx); err != nil {
		return nil, "", err
	}
	since, until := f.Since.UTC().Truncate(time.Millisecond), f.Until.UTC().Truncate(time.Millisecond)
	// No event is older than its account, whose id says when it was made
	// (less a day, for the clocks of different functions): a page that is
	// never full reads back to then, not the whole retention, which on
	// DynamoDB is 16 queries a day.
	if born, ok := ids.Time("acct", f.AccountID); ok {
		if earliest := born.Add(-24 * time.Hour).UTC().Truncate(time.Millisecond); earliest.After(since) {
			since = earliest
		}
	}
	floor := lowestID(since)
	day, after := dayOf(until.Add(-time.Millisecond)), lowestID(until)
	if f.Cursor != "" {
		cday, csk, err := parseListCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		if cday < day || cday == day && csk < after {
			day, after = cday, csk
		}
	}
	lastDay := dayOf(since)
	out := make([]Event, 0, f.Limit+1)
	scanned := 0
	for span := 1; day >= lastDay; span = min(2*span, maxSpan) {
		days := []string{day}
		for len(days) < span && prevDay(days[len(days)-1]) >= lastDay {
			days = append(days, prevDay(days[len(days)-1]))
		}
		m := newMerge(r.st, f.AccountID, days, after, f.Limit+1)
		m.now = r.now().Unix()
		for {
			e, ok, err := m.next(ctx)
			if err != nil {
				return nil, "", err
			}
			if !ok {
				break
			}
			sk := e.ID
			if sk < floor {
				return out, "", nil
			}
			if f.matches(&e) {
				out = append(out, e)
				if len(out) > f.Limit {
					last := out[f.Limit-1]
					return out[:f.Limit], listCursor(dayOf(last.OccurredAt), last.ID), nil
				}
			}
			if scanned++; scanned >= maxScan {
				return out, listCursor(dayOf(e.OccurredAt), sk), nil
			}
		}
		day, after = prevDay(days[len(days)-1]), ""
	}
	return out, "", nil
}

func listCursor(day, sk string) string { return paging.Cursor(day + "|" + sk) }

func parseListCursor(c string) (day, sk string, err error) {
	pos, err := paging.After(c)
	if err != nil {
		return "", "", err
	}
	day, sk, ok := strings.Cut(pos, "|")
	if _, perr := time.Parse(dayLayout, day); !ok || perr != nil || !ids.Valid("aud", sk) {
		return "", "", apierr.Invalid("Invalid cursor.", apierr.Field("query.cursor", "not a cursor from this list"))
	}
	return day, sk, nil
}

func prevDay(day string) string {
	t, _ := time.Parse(dayLayout, day)
	return t.AddDate(0, 0, -1).Format(dayLayout)
}

// maxSpan bounds how many days one round of a page reads at once. A page
// starts with the newest day and doubles the days it reads together each
// time the page is not yet full, so a busy day costs Shards small queries
// and a sparse 90-day range about seven rounds instead of 91, with at most
// maxSpan × Shards queries in flight.
const maxSpan = 8

// merge reads shards newest first, refilling a shard's buffer only
// when its head is needed, all empty shards at once. A shard's items are
// events, or (embedded) blocks of them (see block.go), which the merge
// expands as it meets them: a block's sort key is its greatest id, so a
// shard's head event is final once no unread item's sort key is above it.
type merge struct {
	st     store.Store
	shards []*shardCursor
	batch  int
	blocks bool  // the store keeps events in blocks
	now    int64 // unix seconds: a block's older events expire before it
}

type shardCursor struct {
	pk    string
	after string
	// below, when set, is the cursor's event: the shard's events at or
	// above it were read on an earlier page.
	below string
	// straddle is whether the block holding below is still to be read.
	straddle bool
	buf      []store.Item // read, not yet expanded, sort key descending
	more     bool
	evs      []entry // expanded, id descending
}

// entry is an expanded event: decoded (an item of its own), or its stored
// document (a block's), decoded only when the page takes it.
type entry struct {
	id  string
	e   Event
	doc []byte
}

// newMerge reads the shards of days (newest first), the first day from
// after on. Days are disjoint id ranges, so one merge over all their shards
// is still in id order.
func newMerge(st store.Store, accountID string, days []string, after string, want int) *merge {
	m := &merge{st: st, batch: min(want/(Shards*len(days))+2, 100), blocks: inBlocks(st)}
	for i, day := range days {
		for s := range Shards {
			c := &shardCursor{pk: eventPK(accountID, day, s), after: after, more: true}
			if m.blocks && after != "" {
				c.below, c.straddle = after, true
			}
			m.shards = append(m.shards, c)
		}
		if i == 0 {
			after = ""
		}
	}
	return m
}

// next is the newest unread event of the shards; false when none is left.
// A block's event whose retention has passed is skipped (the block lives
// as long as its newest event).
func (m *merge) next(ctx context.Context) (Event, bool, error) {
	for {
		en, ok, err := m.nextEntry(ctx)
		if err != nil || !ok || en.doc == nil {
			return en.e, ok, err
		}
		var s stored
		if err := json.Unmarshal(en.doc, &s); err != nil {
			return Event{}, false, fmt.Errorf("audit: block event %s: %w", en.id, err)
		}
		e, err := fromStored(s)
		if err != nil {
			return Event{}, false, fmt.Errorf("audit: block event %s: %w", en.id, err)
		}
		if expiry(e.OccurredAt) > m.now {
			return e, true, nil
		}
	}
}

func (m *merge) nextEntry(ctx context.Context) (entry, bool, error) {
	for {
		if err := m.straddling(ctx); err != nil {
			return entry{}, false, err
		}
		if err := m.refill(ctx); err != nil {
			return entry{}, false, err
		}
		settled := true
		for _, s := range m.shards {
			ok, err := s.settle()
			if err != nil {
				return entry{}, false, err
			}
			settled = settled && ok
		}
		if settled {
			break
		}
	}
	var best *shardCursor
	for _, s := range m.shards {
		if len(s.evs) > 0 && (best == nil || s.evs[0].id > best.evs[0].id) {
			best = s
		}
	}
	if best == nil {
		return entry{}, false, nil
	}
	en := best.evs[0]
	best.evs = best.evs[1:]
	return en, true, nil
}

// settle expands the shard's read items whose sort key is above its head
// event and reports whether the head is final (false: the shard needs its
// next page first).
func (s *shardCursor) settle() (bool, error) {
	for len(s.buf) > 0 && (len(s.evs) == 0 || s.buf[0].Key().SK > s.evs[0].id) {
		if err := s.expand(s.buf[0]); err != nil {
			return false, err
		}
		s.buf = s.buf[1:]
	}
	if len(s.buf) > 0 || !s.more {
		return true, nil
	}
	// Every unread item's sort key is below after, the last one read.
	return len(s.evs) > 0 && s.evs[0].id >= s.after, nil
}

// expand adds an item's events to the shard's, in id order.
func (s *shardCursor) expand(it store.Item) error {
	if !isBlock(it) {
		e, err := DecodeItem(it)
		if err != nil {
			return err
		}
		s.insert(entry{id: e.ID, e: e})
		return nil
	}
	b, err := inflate(it)
	if err != nil {
		return err
	}
	for _, d := range b.docs {
		if s.below == "" || d.id < s.below {
			s.evs = append(s.evs, entry{id: d.id, doc: d.doc})
		}
	}
	slices.SortFunc(s.evs, func(a, b entry) int { return strings.Compare(b.id, a.id) })
	return nil
}

func (s *shardCursor) insert(en entry) {
	i, _ := slices.BinarySearchFunc(s.evs, en.id, func(x entry, id string) int { return strings.Compare(id, x.id) })
	s.evs = slices.Insert(s.evs, i, en)
}

// straddling reads, for a page that starts at a cursor, the block of each
// shard that holds the cursor's event: its sort key is at or above the
// cursor, and its events below it are not read yet.
func (m *merge) straddling(ctx context.Context) error {
	for _, s := range m.shards {
		if !s.straddle {
			continue
		}
		s.straddle = false
		after := s.below[:len(s.below)-1]
		for {
			page, err := m.st.Query(ctx, store.Query{PK: s.pk, After: after, Limit: 8})
			if err != nil {
				return fmt.Errorf("audit: list: %w", err)
			}
			found := false
			for _, it := range page.Items {
				after = it.Key().SK
				if it.Key().SK >= s.below && isBlock(it) {
					if err := s.expand(it); err != nil {
						return err
					}
					found = true
					break
				}
			}
			if found || !page.More {
				break
			}
		}
	}
	return nil
}

func (m *merge) refill(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(m.shards))
	refilled := false
	for i, s := range m.shards {
		if len(s.buf) > 0 || !s.more || len(s.evs) > 0 && s.evs[0].id >= s.after {
			continue
		}
		refilled = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			page, err := m.st.Query(ctx, store.Query{PK: s.pk, After: s.after, Limit: m.batch, Reverse: true})
			if err != nil {
				errs[i] = fmt.Errorf("audit: list: %w", err)
				return
			}
			s.buf, s.more = page.Items, page.More
			if n := len(page.Items); n > 0 {
				s.after = page.Items[n-1].Key().SK
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	// Later refills are larger: a shard read again holds the events the
	// page is made of.
	if refilled {
		m.batch = min(m.batch*2, 100)
	}
	return nil
}
