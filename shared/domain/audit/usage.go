package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/domain/paging"
)

// Group-by dimensions of GET /usage.
const (
	GroupProject   = "project"
	GroupKey       = "key"
	GroupService   = "service"
	GroupOperation = "operation"
)

// Bucket widths and how many buckets one page holds at most.
const (
	MaxHourlyBuckets = 168
	MaxDailyBuckets  = 31
)

// UsageFilter selects usage for a viewer: buckets of BucketWidth (an hour or
// a UTC day) from Start to End, the results of each grouped by GroupBy.
type UsageFilter struct {
	Viewer
	Start, End  time.Time
	BucketWidth time.Duration
	GroupBy     []string
	Cursor      string
}

// UsageQuery is GET /usage's query as sent.
type UsageQuery struct {
	Start, End  string // RFC 3339; Start is floored and End ceiled to the bucket width
	BucketWidth string // "1h" or "1d" (default)
	GroupBy     string // comma-separated subset of project,key,service,operation
	Cursor      string
}

// UsageBucket is one time bucket of usage.
type UsageBucket struct {
	StartTime time.Time     `json:"startTime"`
	EndTime   time.Time     `json:"endTime"`
	Results   []UsageResult `json:"results"`
}

// UsageResult sums one group's requests; dimensions not grouped by are null.
type UsageResult struct {
	ProjectID      *string `json:"projectId"`
	KeyID          *string `json:"keyId"`
	ServiceID      *string `json:"serviceId"`
	Operation      *string `json:"operation"`
	Requests       int64   `json:"requests"`
	Errors         int64   `json:"errors" doc:"Requests answered with a status of 400 or more"`
	ChargedCredits float64 `json:"chargedCredits"`
	ChargedMicro   int64   `json:"-"`
}

// ParseUsageQuery turns the query into a UsageFilter for v, or a
// validation_failed error naming the parameter. Without start, one page
// ending at end (default now) is asked for.
func ParseUsageQuery(v Viewer, q UsageQuery, now time.Time) (UsageFilter, error) {
	f := UsageFilter{Viewer: v, Cursor: q.Cursor}
	var bad []apierr.FieldError
	switch q.BucketWidth {
	case "", "1d":
		f.BucketWidth = 24 * time.Hour
	case "1h":
		f.BucketWidth = time.Hour
	default:
		bad = append(bad, apierr.Field("query.bucketWidth", "1h or 1d"))
		f.BucketWidth = 24 * time.Hour
	}
	var err error
	f.End = now
	if q.End != "" {
		if f.End, err = time.Parse(time.RFC3339Nano, q.End); err != nil {
			bad = append(bad, apierr.Field("query.end", "an RFC 3339 time, e.g. 2026-01-02T00:00:00Z"))
		}
	}
	f.Start = f.End.Add(-time.Duration(maxBuckets(f.BucketWidth)-1) * f.BucketWidth)
	if q.Start != "" {
		if f.Start, err = time.Parse(time.RFC3339Nano, q.Start); err != nil {
			bad = append(bad, apierr.Field("query.start", "an RFC 3339 time, e.g. 2026-01-02T00:00:00Z"))
		}
	}
	if q.GroupBy != "" {
		f.GroupBy = strings.Split(q.GroupBy, ",")
	}
	if len(bad) > 0 {
		return UsageFilter{}, apierr.Invalid("Invalid usage query.", bad...)
	}
	return f, f.validate()
}

func maxBuckets(width time.Duration) int {
	if width == time.Hour {
		return MaxHourlyBuckets
	}
	return MaxDailyBuckets
}

// validate checks the filter and aligns its range to whole buckets.
func (f *UsageFilter) validate() error {
	var bad []apierr.FieldError
	if f.BucketWidth != time.Hour && f.BucketWidth != 24*time.Hour {
		bad = append(bad, apierr.Field("query.bucketWidth", "1h or 1d"))
	}
	bad = append(bad, checkRange("query.start", "query.end", f.Start, f.End)...)
	for _, g := range f.GroupBy {
		if !slices.Contains([]string{GroupProject, GroupKey, GroupService, GroupOperation}, g) {
			bad = append(bad, apierr.Field("query.groupBy", "a comma-separated subset of project, key, service, operation; not %q", g))
			break
		}
	}
	if len(bad) > 0 {
		return apierr.Invalid("Invalid usage query.", bad...)
	}
	f.Start = f.Start.UTC().Truncate(f.BucketWidth)
	if end := f.End.UTC().Truncate(f.BucketWidth); end.Before(f.End) {
		f.End = end.Add(f.BucketWidth)
	} else {
		f.End = end
	}
	return nil
}

type groupKey struct{ project, key, service, operation string }

type sums struct{ requests, errors, micro int64 }

// Usage returns a page of buckets (at most MaxHourlyBuckets or
// MaxDailyBuckets, oldest first, empty ones included) and the cursor of the
// next page. It reads one counter partition per day of the page, keeps the
// counters of keys the viewer sees (the counter's key path holds the viewer)
// in its project, and sums them by the groups asked for. The sums are the
// audit events' of the same buckets once the rollup has counted them.
func (r *Repo) Usage(ctx context.Context, f UsageFilter) ([]UsageBucket, string, error) {
	if err := f.check(); err != nil {
		return nil, "", err
	}
	if err := f.validate(); err != nil {
		return nil, "", err
	}
	if err := r.settle(ctx); err != nil {
		return nil, "", err
	}
	from := f.Start
	if f.Cursor != "" {
		pos, err := paging.After(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		sec, err := strconv.ParseInt(pos, 10, 64)
		t := time.Unix(sec, 0).UTC()
		if err != nil || t.Before(f.Start) || !t.Before(f.End) || !t.Truncate(f.BucketWidth).Equal(t) {
			return nil, "", apierr.Invalid("Invalid cursor.", apierr.Field("query.cursor", "not a cursor from this query"))
		}
		from = t
	}
	to := from.Add(time.Duration(maxBuckets(f.BucketWidth)) * f.BucketWidth)
	next := ""
	if to.Before(f.End) {
		next = paging.Cursor(strconv.FormatInt(to.Unix(), 10))
	} else {
		to = f.End
	}
	n := int(to.Sub(from) / f.BucketWidth)
	groups := make([]map[groupKey]*sums, n)
	for i := range groups {
		groups[i] = map[groupKey]*sums{}
	}
	var days []string
	for d := from.Truncate(24 * time.Hour); d.Before(to); d = d.Add(24 * time.Hour) {
		days = append(days, dayOf(d))
	}
	counters, err := r.readCounters(ctx, f.AccountID, days)
	if err != nil {
		return nil, "", err
	}
	for _, c := range counters {
		hour, err := time.Parse(dayLayout+hourLayout, c.day+c.it.Key().SK[:2])
		if err != nil {
			return nil, "", fmt.Errorf("audit: usage: counter %s: %w", c.it.Key(), err)
		}
		if hour.Before(from) || !hour.Before(to) {
			continue
		}
		project := c.it.String(attrProject)
		if !f.sees(strings.Split(c.it.String(attrKeyPath), "/"), project) {
			continue
		}
		g := f.group(groupKey{project, c.it.String(attrKeyID), c.it.String(attrService), c.it.String(attrOp)})
		b := groups[int(hour.Sub(from)/f.BucketWidth)]
		s := b[g]
		if s == nil {
			s = &sums{}
			b[g] = s
		}
		s.requests += c.it.Int(attrRequests)
		s.errors += c.it.Int(attrErrors)
		s.micro += c.it.Int(attrMicro)
	}
	out := make([]UsageBucket, n)
	for i, b := range groups {
		start := from.Add(time.Duration(i) * f.BucketWidth)
		out[i] = UsageBucket{StartTime: start, EndTime: start.Add(f.BucketWidth), Results: f.results(b)}
	}
	return out, next, nil
}

// group blanks the dimensions not grouped by.
func (f *UsageFilter) group(k groupKey) groupKey {
	if !slices.Contains(f.GroupBy, GroupProject) {
		k.project = ""
	}
	if !slices.Contains(f.GroupBy, GroupKey) {
		k.key = ""
	}
	if !slices.Contains(f.GroupBy, GroupService) {
		k.service = ""
	}
	if !slices.Contains(f.GroupBy, GroupOperation) {
		k.operation = ""
	}
	return k
}

func (f *UsageFilter) results(b map[groupKey]*sums) []UsageResult {
	keys := make([]groupKey, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y groupKey) int {
		return cmp.Or(cmp.Compare(x.project, y.project), cmp.Compare(x.key, y.key),
			cmp.Compare(x.service, y.service), cmp.Compare(x.operation, y.operation))
	})
	out := make([]UsageResult, 0, len(keys))
	for _, k := range keys {
		s := b[k]
		out = append(out, UsageResult{
			ProjectID: nonEmpty(k.project), KeyID: nonEmpty(k.key), ServiceID: nonEmpty(k.service), Operation: nonEmpty(k.operation),
			Requests: s.requests, Errors: s.errors, ChargedMicro: s.micro, ChargedCredits: float64(s.micro) / catalog.MicroPerCredit,
		})
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type dayCounter struct {
	day string
	it  store.Item
}

// readCounters reads the counter partitions of the days, a few at a time.
func (r *Repo) readCounters(ctx context.Context, accountID string, days []string) ([]dayCounter, error) {
	parts := make([][]dayCounter, len(days))
	errs := make([]error, len(days))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, day := range days {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			after := ""
			for {
				page, err := r.st.Query(ctx, store.Query{PK: usagePK(accountID, day), After: after, Limit: 100})
				if err != nil {
					errs[i] = fmt.Errorf("audit: usage: %w", err)
					return
				}
				for _, it := range page.Items {
					parts[i] = append(parts[i], dayCounter{day: day, it: it})
					after = it.Key().SK
				}
				if !page.More {
					return
				}
			}
		}()
	}
	wg.Wait()
	var out []dayCounter
	for i := range days {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, parts[i]...)
	}
	return out, nil
}
