package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/audit"
	"platformapi/shared/lambdaedge/auditlogs"
)

// AuditFigures are what auditing costs a request, as
// shipped, beside the same request with auditing off.
type AuditFigures struct {
	// RPSAuthenticatedAudited is the authenticated read with auditing on
	// (rpsAuthenticated is the same read with it off).
	RPSAuthenticatedAudited float64 `json:"rpsAuthenticatedAudited"`
	// OverheadRatioAudited is the audited read's p50 over the bare p50.
	OverheadRatioAudited float64 `json:"overheadRatioAudited"`
	// RPSIdempotentWriteAudited is POST /v1/projects with auditing on.
	RPSIdempotentWriteAudited float64 `json:"rpsIdempotentWriteAudited"`
	// StorageOpsPerReadAudited is the round trips on the request path of
	// an audited read as a Lambda function serves it (the event leaves as a
	// log line); StorageOpsPerReadAuditPut the same with the event as a
	// PutItem on the request path.
	StorageOpsPerReadAudited  float64 `json:"storageOpsPerReadAudited"`
	StorageOpsPerReadAuditPut float64 `json:"storageOpsPerReadAuditPut"`
	// AuditIngestWriteUnitsPerEvent is what audit-ingest writes per event,
	// off the request path; it is in the cost per million reads.
	AuditIngestWriteUnitsPerEvent float64 `json:"auditIngestWriteUnitsPerEvent"`
	// AuditLogBytesPerRead is what the event adds to its access line.
	AuditLogBytesPerRead float64 `json:"auditLogBytesPerRead"`
	// AuditLagMillis is the median time from a read's answer to its event
	// in GET /audit-events through the ingest (storageSource's store),
	// AuditLagMaxMillis the longest; CloudWatch Logs' own delivery to the
	// subscription is not emulated and comes on top.
	AuditLagMillis    float64 `json:"auditLagMillis"`
	AuditLagMaxMillis float64 `json:"auditLagMaxMillis"`
	// AuditTailMillis is, embedded, the longest an answered request's event
	// was on no disk (journal written, not yet fsynced) during the audited
	// loads: what a machine crash (not a process crash) could have lost.
	AuditTailMillis float64 `json:"auditTailMillis"`
	// DynamoDBBytesPerEvent is what DynamoDB stores for one audit event:
	// its item's size by DynamoDB's rules plus the 100 bytes of overhead it
	// bills for every item. Beside dataDirBytesPerMillionAudited (embedded,
	// where events are kept in deflated blocks).
	DynamoDBBytesPerEvent float64 `json:"dynamoDBBytesPerEvent"`
}

func auditFigures(m measurements) AuditFigures {
	read, write, bare, st := m.load[loadRead], m.load[loadWrite], m.load[loadBare], m.storage
	_, ingestWRU := st.Ingest.Units()
	lag := slices.Clone(st.Lag)
	slices.Sort(lag)
	return AuditFigures{
		RPSAuthenticatedAudited:       round(read.RPS(), 0),
		OverheadRatioAudited:          round(ratio(read.Percentile(50), bare.Percentile(50)), 2),
		RPSIdempotentWriteAudited:     round(write.RPS(), 0),
		StorageOpsPerReadAudited:      round(st.Read.Total(), 2),
		StorageOpsPerReadAuditPut:     round(st.ReadPut.Total(), 2),
		AuditIngestWriteUnitsPerEvent: round(ingestWRU, 2),
		AuditLogBytesPerRead:          round(st.LogBytes, 0),
		AuditLagMillis:                millis(percentile(lag, 50)),
		AuditLagMaxMillis:             millis(percentile(lag, 100)),
		AuditTailMillis:               millis(max(read.AuditTail, write.AuditTail)),
		DynamoDBBytesPerEvent:         round(st.EventItemBytes+dynamoDBItemOverhead, 0),
	}
}

// dynamoDBItemOverhead is the bytes DynamoDB adds to every item's stored
// size (its storage pricing).
const dynamoDBItemOverhead = 100

// writeAuditTable prints the audit figures.
func writeAuditTable(p func(string, ...any), r Report) {
	a := r.AuditFigures
	p("Audit: embedded, the event goes to a write(2) journal and a flusher commits batches; on Lambda, to a log line that audit-ingest stores")
	p("rpsAuthenticatedAudited / rpsAuthenticated (audit off)\t%.0f / %.0f\t(%.0f%%; target ≥ 80%%)", a.RPSAuthenticatedAudited, r.RPSAuthenticated, 100*a.RPSAuthenticatedAudited/max(r.RPSAuthenticated, 1))
	p("overheadRatioAudited (p50 audited read / p50 bare: GET /health)\t%.2f\t(target ≤ %.1f)", a.OverheadRatioAudited, targetOverheadRatio)
	p("overheadRatioAuditedVsNoop (p50 audited read / p50 no-op handler)\t%.2f", r.OverheadRatioAuditedVsNoop)
	p("rpsIdempotentWriteAudited\t%.0f", a.RPSIdempotentWriteAudited)
	p("auditTailMillis (longest an answered event was on no disk: a machine crash's loss window)\t%.1f ms\t(target ≤ 50)", a.AuditTailMillis)
	p("storageOpsPerReadAudited (request path, event shipped as a log line)\t%g\t(the event as a PutItem: %g)", a.StorageOpsPerReadAudited, a.StorageOpsPerReadAuditPut)
	p("off the request path, per event\t%g WRU (audit-ingest)\t%.0f log bytes", a.AuditIngestWriteUnitsPerEvent, a.AuditLogBytesPerRead)
	p("stored bytes per event: DynamoDB (item + 100 bytes overhead) / embedded (data directory growth)\t%.0f / %.0f", a.DynamoDBBytesPerEvent, r.DataDirBytesPerMillionAudited/1e6)
	p("auditLagMillis (answer → listed, through audit-ingest; p50 / max)\t%.1f / %.1f ms\t(plus CloudWatch Logs' delivery, not emulated)", a.AuditLagMillis, a.AuditLagMaxMillis)
	p("")
}

// shippedLines collects the lines a server with a shipping recorder logs,
// and hands on the ones its subscription filter (audit.ShipFilterPattern)
// delivers: the server's other lines (a failed lastUsedAt write on a busy
// emulator, say) never reach audit-ingest.
type shippedLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *shippedLines) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(b)
}

// take returns the subscribed lines written since the last take.
func (s *shippedLines) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lines []string
	for l := range strings.Lines(s.buf.String()) {
		if l = strings.TrimSpace(l); subscribed(l) {
			lines = append(lines, l)
		}
	}
	s.buf.Reset()
	return lines
}

// subscribed reports whether a line matches audit.ShipFilterPattern.
func subscribed(line string) bool {
	var v struct {
		Marker *int `json:"au"`
	}
	return json.Unmarshal([]byte(line), &v) == nil && v.Marker != nil && *v.Marker == 1
}

// auditBytes is what the events add to their access lines: each line's
// marker and "audit" attribute (when the event says more than the line),
// their names and commas included. The rest of the line is the request's
// own, logged with or without auditing; the line's time, the event's,
// takes no more bytes than time.Now's.
func auditBytes(lines []string) (int, error) {
	n := 0
	for _, l := range lines {
		var v struct {
			Audit json.RawMessage `json:"audit"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			return 0, fmt.Errorf("bench: an undecodable access line %q: %w", l, err)
		}
		n += len(`,"au":1`)
		if v.Audit != nil {
			n += len(`,"audit":`) + len(v.Audit)
		}
	}
	return n, nil
}

// delivery packs lines as a CloudWatch Logs subscription delivers them.
func delivery(lines []string) (events.CloudwatchLogsEvent, error) {
	data := events.CloudwatchLogsData{MessageType: "DATA_MESSAGE", LogGroup: "/aws/lambda/credits", SubscriptionFilters: []string{"audit-events"}}
	for i, l := range lines {
		data.LogEvents = append(data.LogEvents, events.CloudwatchLogsLogEvent{ID: fmt.Sprint(i), Timestamp: time.Now().UnixMilli(), Message: l})
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return events.CloudwatchLogsEvent{}, err
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write(raw); err != nil {
		return events.CloudwatchLogsEvent{}, err
	}
	if err := w.Close(); err != nil {
		return events.CloudwatchLogsEvent{}, err
	}
	return events.CloudwatchLogsEvent{AWSLogs: events.CloudwatchLogsRawData{Data: base64.StdEncoding.EncodeToString(gz.Bytes())}}, nil
}

// auditLag sends reads one at a time and times each from its answer to its
// event in the list: the shipped line goes through the ingest's adapter
// (audit-ingest) at once, as a subscription delivery would.
func auditLag(ctx context.Context, st store.Store, accountID string, lines *shippedLines, read func(int) error, n int) ([]time.Duration, error) {
	repo := audit.NewRepo(st, nil)
	in := auditlogs.New(st)
	var out []time.Duration
	for i := range n {
		lines.take()
		if err := read(i); err != nil {
			return nil, err
		}
		answered := time.Now()
		got := lines.take()
		if len(got) != 1 {
			return nil, fmt.Errorf("bench: a read shipped %d audit lines, want 1", len(got))
		}
		e, _, ok := audit.Shipped(got[0])
		if !ok {
			return nil, fmt.Errorf("bench: an undecodable audit line %q", got[0])
		}
		ev, err := delivery(got)
		if err != nil {
			return nil, err
		}
		if err := in.Handle(ctx, ev); err != nil {
			return nil, err
		}
		// The key itself views its events; the line names no ancestor.
		f := audit.Filter{Viewer: audit.Viewer{AccountID: accountID, KeyPath: []string{e.KeyID}}, KeyID: e.KeyID,
			Since: e.OccurredAt, Until: e.OccurredAt.Add(time.Millisecond), Limit: audit.MaxLimit}
		for {
			evs, _, err := repo.List(ctx, f)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(evs, func(x audit.Event) bool { return x.ID == e.ID }) {
				out = append(out, time.Since(answered))
				break
			}
			if time.Since(answered) > 30*time.Second {
				return nil, fmt.Errorf("bench: event %s not listed after 30 s", e.ID)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return out, nil
}
