package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"platformapi/shared/base/apierr"
	"platformapi/shared/base/emf"
	"platformapi/shared/base/jsonlog"
	"platformapi/shared/base/redact"
	"platformapi/shared/base/routes"
	"platformapi/shared/domain/audit"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/credits"
)

// requestState is everything the request path keeps about one request, in
// one context value set by edge: one allocation and one r.WithContext
// instead of one per field, on the path every request takes.
type requestState struct {
	id   string
	base *slog.Logger
	// logger is base with the request id, made on first use: most requests
	// log only their access line, which names the id itself.
	loggerOnce sync.Once
	logger     *slog.Logger
	info       logInfo
	outcome    outcome
	// audit is the request's audit hook (auditing), kept here to cost no
	// allocation of its own.
	audit     auditHook
	principal *Principal
	// shipped is the request's audit event when it rides on the access
	// line (a shipping recorder, see recordAudit).
	shipped *audit.Event
	// named is when the request's audit event occurred, fixed when it
	// took a credit hold (NameCharge) or when its charged answer was
	// stored (nameCharge); owed are the charges of the call whose answer
	// this request replays (its own and those it owed), inherited the charges of holds earlier
	// attempts of its call took, each owed to that attempt's event (see
	// recordAudit). now is the kernel's clock. named and inherited are
	// guarded by outcome.mu.
	named     time.Time
	owed      []idempotency.Charged
	inherited []idempotency.Charged
	now       func() time.Time
	// invocation names the Lambda invocation and its trace (see
	// invocation), on every log line of the request.
	invocation []any
	// rec watches the response for the access line; url is the request's
	// URL, the kernel's own copy, which stripVersion may edit in place;
	// idHeader is the X-Request-Id header's value. All three live here, in
	// the one allocation every request makes anyway.
	rec      recorder
	url      url.URL
	idHeader [1]string
	// ctx is the request's context below edge (see requestContext);
	// cause is the ledger's credits.Cause it answers, this request.
	ctx   requestContext
	cause credits.Cause
	// caller is the principal authenticate fills in; principal points to
	// it once the request passed every check.
	caller Principal
	// route is the route enforce serves the request by; nil elsewhere.
	route *routes.Route
}

// Attribution is who a ledger change made by the request is shown to
// (credits.Request): its key chain, project and operation, as its audit
// event names them.
func (st *requestState) Attribution() credits.Attribution {
	p := st.principal
	if st.route == nil || p == nil || p.Key() == nil {
		return credits.Attribution{RequestID: st.id}
	}
	return credits.Attribution{RequestID: st.id, KeyPath: p.KeyPath(), ProjectID: p.ProjectID,
		Operation: auditOperation(*st.route, p.Service, p.Operation)}
}

// Charged adds micro-credits the request's operation charged to its audit
// event (credits.Request): the ledger reports every change it commits in
// the request's context, whichever group made it.
func (st *requestState) Charged(micro int64) {
	st.outcome.mu.Lock()
	st.outcome.charged += micro
	st.outcome.mu.Unlock()
}

// NameCharge fixes the name of the request's audit event, if it is not
// fixed yet, and returns it (credits.EventNamer): a credit hold keeps it,
// so that another attempt of the call that finds the hold owes its charge
// to this event rather than charging its own.
func (st *requestState) NameCharge() credits.ChargeName {
	st.outcome.mu.Lock()
	defer st.outcome.mu.Unlock()
	if st.named.IsZero() {
		now := time.Now
		if st.now != nil {
			now = st.now
		}
		st.named = now().UTC().Truncate(time.Millisecond)
	}
	return credits.ChargeName{RequestID: st.id, AtMilli: st.named.UnixMilli()}
}

// Owe records micro-credits an earlier attempt of the request's call
// charged under name (credits.EventNamer): the request writes that
// attempt's event again, which the audit store keeps once, instead of
// charging its own.
func (st *requestState) Owe(micro int64, name credits.ChargeName) {
	st.outcome.mu.Lock()
	defer st.outcome.mu.Unlock()
	if name.RequestID == st.id {
		st.outcome.charged += micro
		return
	}
	for i, c := range st.inherited {
		if c.RequestID == name.RequestID && c.AtMilli == name.AtMilli {
			st.inherited[i].Micro += micro
			return
		}
	}
	st.inherited = append(st.inherited, idempotency.Charged{Micro: micro, RequestID: name.RequestID, AtMilli: name.AtMilli})
}

func RequestID(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.id
	}
	return ""
}

func Logger(ctx context.Context) *slog.Logger {
	st := stateFrom(ctx)
	if st == nil {
		return slog.Default()
	}
	st.loggerOnce.Do(func() { st.logger = st.base.With(append([]any{slog.String("requestId", st.id)}, st.invocation...)...) })
	return st.logger
}

// logInfo is filled in as the request travels so that the access log line can
// name the operation and the key without ever seeing a secret.
type logInfo struct {
	group     string
	operation string
	keyID     string
	endUser   string
	// literalPath: the request matched a route without path parameters,
	// so its path is the route table's own text and holds no secret to
	// redact (redaction's regular expressions were 7% of a read's CPU).
	literalPath bool
	// endUserDone: endUser is the key's privacy tier applied to the end
	// user (endUserForLog), which the audit event then reuses.
	endUserDone bool
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	var id [4 + 2*len(b)]byte
	copy(id[:], "req_")
	hex.Encode(id[4:], b[:])
	return string(id[:])
}

// edge is the outermost middleware: a request id on every response, one
// JSON access-log line per request (operation, status, latency; never a
// header value, a body or a secret), and panics turned into a plain 500.
func (k *Kernel) edge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &requestState{id: newRequestID(), base: k.log, invocation: invocation(r.Context())}
		st.idHeader[0] = st.id
		w.Header()["X-Request-Id"] = st.idHeader[:]
		info := &st.info
		r = r.WithContext(st.bind(r.Context()))
		st.url = *r.URL
		r.URL = &st.url
		st.rec.w = w
		rec := &st.rec
		defer func() {
			if p := recover(); p != nil {
				Logger(r.Context()).Error("panic", slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					WriteProblem(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			path := r.URL.Path
			if !info.literalPath {
				path = redact.Secrets(path)
			}
			// One reading of the clock for the latency, the metrics and
			// the line's time.
			end := time.Now()
			took := end.Sub(start)
			// Attributes in an array, not boxed one by one into []any.
			var buf [24]slog.Attr
			attrs := append(buf[:0],
				slog.String("requestId", st.id),
				slog.String("method", r.Method), slog.String("path", path),
				slog.Int("status", rec.status), slog.Int64("latencyMicros", took.Microseconds()),
				slog.Int("bytes", rec.bytes),
			)
			if info.operation != "" {
				attrs = append(attrs, slog.String("operation", info.operation))
			}
			if info.keyID != "" {
				attrs = append(attrs, slog.String("keyId", info.keyID))
			}
			var endUser string
			if info.endUser != "" {
				endUser = redact.Secrets(info.endUser)
				attrs = append(attrs, slog.String("endUser", endUser))
			}
			at := end
			if st.shipped != nil {
				// The line is written at its event's time, which the
				// ingest reads back as the event's millisecond: the event
				// adds only its marker to a plain read's line.
				at = st.shipped.OccurredAt
				attrs = audit.Fold(attrs, *st.shipped, audit.Line{RequestID: st.id, Method: r.Method,
					Path: path, Status: rec.status, Operation: info.operation, KeyID: info.keyID, EndUser: endUser})
			}
			for _, a := range st.invocation {
				attrs = append(attrs, a.(slog.Attr))
			}
			if !k.cfg.NoMetrics {
				attrs = st.requestMetrics(took).AppendAttrs(attrs, at)
			}
			// A line that carries its request's audit event is written
			// whatever the log level: the event exists nowhere else.
			h := k.log.Handler()
			switch j, fast := h.(*jsonlog.Handler); {
			case st.shipped == nil && !h.Enabled(r.Context(), slog.LevelInfo):
			case fast:
				_ = j.Write(r.Context(), at, slog.LevelInfo, "request", attrs...)
			default:
				line := slog.NewRecord(at, slog.LevelInfo, "request", 0)
				line.AddAttrs(attrs...)
				_ = h.Handle(r.Context(), line)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// invocation names the Lambda invocation serving the request, on every log
// line of the request: its Lambda request id (the REPORT line's, with the
// duration and memory billed) and its X-Ray trace id (active tracing), so
// that a client's X-Request-Id leads to the invocation and its trace. The
// trace id is the Root of the header the Lambda runtime puts in the
// context under this string key (aws-lambda-go); outside Lambda both are
// absent.
func invocation(ctx context.Context) []any {
	var out []any
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		out = append(out, slog.String("awsRequestId", lc.AwsRequestID))
	}
	header, _ := ctx.Value("x-amzn-trace-id").(string)
	if header == "" {
		return out
	}
	for _, part := range strings.Split(header, ";") {
		if root, ok := strings.CutPrefix(part, "Root="); ok && root != "" {
			out = append(out, slog.String("traceId", root))
		}
	}
	return out
}

// requestMetrics are the CloudWatch metrics of a request, written on its
// access-log line in the Embedded Metric Format (see shared/base/emf): counted
// by group and operation (both bounded by the route table), and problems
// (4xx and 5xx answers) by error code (bounded by the catalogue).
// Account, key and request ids stay plain properties of the line: as
// dimensions they would make a metric per customer. The status class needs
// no dimension: Errors4xx and Errors5xx are 0 or 1 per request, so their
// Sum counts and their Average is the error rate. LimitRefusals, Replays
// and ChargedMicroCredits (an integer of millionths of a credit, as every
// metric value is an integer) appear only on the requests that have them,
// so operations that never charge store no charge metric at all.
//
// The line and its metrics are one allocation, made only where the line
// carries them (Lambda): in the request's state they were a third of the
// bytes every request allocates, the local server's too, which never
// writes them.
func (st *requestState) requestMetrics(took time.Duration) *emf.Line {
	m := new(struct {
		line    emf.Line
		metrics [8]emf.Metric
	})
	rec, info := &st.rec, &st.info
	status := rec.status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	group, op := info.group, info.operation
	if op == "" {
		group, op = "none", "unrouted"
	}
	st.outcome.mu.Lock()
	code, charged := st.outcome.code, st.outcome.charged
	st.outcome.mu.Unlock()
	replayed := rec.replayed()
	if replayed {
		// The replay's answer was decided, counted and charged the first
		// time; this request is counted as a replay only.
		code, charged = "", 0
	}
	ms := append(m.metrics[:0],
		emf.Metric{Name: "Requests", Unit: emf.Count, Value: 1},
		emf.Metric{Name: "Latency", Unit: emf.Milliseconds, Value: took.Milliseconds()},
		emf.Metric{Name: "Errors4xx", Unit: emf.Count, Value: boolInt(status >= 400 && status < 500)},
		emf.Metric{Name: "Errors5xx", Unit: emf.Count, Value: boolInt(status >= 500)},
	)
	if code == apierr.LimitExceeded {
		ms = append(ms, emf.Metric{Name: "LimitRefusals", Unit: emf.Count, Value: 1})
	}
	if replayed {
		ms = append(ms, emf.Metric{Name: "Replays", Unit: emf.Count, Value: 1})
	}
	if charged > 0 {
		ms = append(ms, emf.Metric{Name: "ChargedMicroCredits", Unit: emf.None, Value: charged})
	}
	l := &m.line
	l.Dimension("Group", group).Dimension("Operation", op).
		Add(emf.Directive{Dimensions: byGroupAndOperation, Metrics: ms})
	if status >= 400 && code != "" {
		problems := append(m.metrics[len(ms):len(ms)], emf.Metric{Name: "Problems", Unit: emf.Count, Value: 1})
		l.Dimension("Code", string(code)).
			Add(emf.Directive{Dimensions: byCode, Metrics: problems})
	}
	return l
}

// The dimension sets of requestMetrics, made once: they never change, and
// directives only read them.
var (
	byGroupAndOperation = [][]string{{"Group", "Operation"}, {"Group"}}
	byCode              = [][]string{{"Code"}}
)

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func infoFrom(ctx context.Context) *logInfo {
	if st := stateFrom(ctx); st != nil {
		return &st.info
	}
	return &logInfo{}
}
