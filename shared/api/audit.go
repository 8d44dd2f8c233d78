package api

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/redact"
	"platformapi/shared/base/routes"
	"platformapi/shared/domain/audit"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/keys"
)

// AuditRecorder keeps the audit event of a request. Record is
// what auditing adds to a request: *audit.Recorder is one Put on DynamoDB
// (its stream feeds the rollup) and one journal pwrite(2) embedded. The
// kernel calls it once the answer is known, without the request's
// deadline, so Record bounds its own waits.
type AuditRecorder interface {
	Record(ctx context.Context, e audit.Event) error
}

// auditSettler is a recorder that counts events after Record returns (the
// embedded one), or that other transactions wrote (settlements):
// FlushAudit makes them visible.
type auditSettler interface {
	Settle(ctx context.Context) error
}

// FlushAudit commits and counts every audit event recorded so far, so that
// the audit and usage readers see the event of every request already
// answered and every settlement already committed. A recorder that writes
// on Record has nothing to flush.
func (k *Kernel) FlushAudit(ctx context.Context) error {
	if f, ok := k.cfg.Audit.(auditSettler); ok {
		return f.Settle(ctx)
	}
	return nil
}

// outcome is what the request path learns about a response that the
// status alone does not say: the error code of the problem it answered and
// the credits its operation charged. It travels in the request's context so
// that WriteProblem, huma's error path and the handlers can fill it in.
type outcome struct {
	mu      sync.Mutex
	code    apierr.Code
	charged int64
}

// outcomeFrom is the request's outcome, kept in its requestState.
func outcomeFrom(ctx context.Context) *outcome {
	if st := stateFrom(ctx); st != nil {
		return &st.outcome
	}
	return nil
}

// noteProblem remembers the code of the problem a request answers; the last
// one written is the one the client saw.
func noteProblem(ctx context.Context, code apierr.Code) {
	if o := outcomeFrom(ctx); o != nil {
		o.mu.Lock()
		o.code = code
		o.mu.Unlock()
	}
}

// auditing wraps w when the kernel records audit events. The event is
// journalled as the response leaves, after its status is known and before
// its first byte reaches the client (a streamed download too), so an answer
// a client has seen always has its event, whatever kills the process next.
// The caller defers the hook's finish; a nil hook records nothing.
func (k *Kernel) auditing(w http.ResponseWriter, r *http.Request, rt *routes.Route, p *Principal) (http.ResponseWriter, *auditHook) {
	if k.cfg.Audit == nil {
		return w, nil
	}
	// Below edge, w is edge's passing recorder, which nothing has written
	// through yet: it already watches this response, so the event reads it.
	aw, ok := w.(*recorder)
	if !ok || aw.held != nil || aw.status != 0 {
		aw = passing(w)
	}
	// The path as the client sent it: the version prefix is stripped from
	// r.URL before the operation runs, which may be before the event is.
	path := r.URL.Path
	if !infoFrom(r.Context()).literalPath {
		path = redact.Secrets(path)
	}
	var h *auditHook
	if st := stateFrom(r.Context()); st != nil {
		h = &st.audit
	} else {
		h = new(auditHook)
	}
	*h = auditHook{k: k, r: r, rt: rt, p: p, path: path, aw: aw}
	aw.audit = h
	return aw, h
}

// auditHook is a request's audit event waiting for its response to leave.
type auditHook struct {
	k    *Kernel
	r    *http.Request
	rt   *routes.Route
	p    *Principal
	path string
	aw   *recorder
}

// record journals the event; the recorder calls it once, as the response
// leaves.
func (h *auditHook) record() { h.k.recordAudit(h.r, h.rt, h.p, h.path, h.aw) }

// finish records the event of a request that wrote nothing (the operation
// panicked and the edge answers 500), and logs a response whose body did
// not reach the client whole: its one event already stands.
func (h *auditHook) finish() {
	if h == nil {
		return
	}
	if h.aw.audit != nil {
		h.aw.committing()
		return
	}
	if h.aw.failed != nil {
		Logger(h.r.Context()).Warn("response cut short", "status", h.aw.status, "bytes", h.aw.bytes, "error", h.aw.failed.Error())
	}
}

// recordAudit writes the event of an authenticated request: who called
// (account, key chain, project, end user by the key's privacy tier), what
// (operation, method, path, service) and how it ended (status, code,
// charge, replay). Never a body, a header value or a secret. A failed write
// is logged; the client already has its answer.
func (k *Kernel) recordAudit(r *http.Request, rt *routes.Route, p *Principal, path string, aw *recorder) {
	key := p.Key()
	o := outcomeFrom(r.Context())
	status := aw.status
	if status == 0 {
		// Nothing was written: the operation panicked, and the edge
		// answers 500.
		status = http.StatusInternalServerError
	}
	e := audit.Event{
		RequestID: RequestID(r.Context()), AccountID: key.AccountID, KeyPath: p.KeyPath(),
		Operation: auditOperation(*rt, p.Service, p.Operation), ServiceID: p.Service,
		Method: r.Method, Path: path, Status: status, IdempotentReplayed: aw.replayed(),
	}
	// Each pointer's string is declared where it is taken, so that an event
	// without a project or an end user allocates neither.
	switch {
	case p.ProjectID != "":
		project := p.ProjectID
		e.ProjectID = &project
	case key.ProjectID != nil:
		// A bound key refused before its project was selected still acted
		// in its project, and must see the event.
		bound := *key.ProjectID
		e.ProjectID = &bound
	}
	// Kept for 90 days and readable by the key's ancestors: a secret sent
	// by mistake in the path or as the end user is no more kept here than
	// in the request log.
	info := infoFrom(r.Context())
	seen := info.endUser
	if !info.endUserDone {
		seen = k.endUserForLog(r.Context(), p)
	}
	if seen != "" {
		eu := redact.Secrets(seen)
		e.EndUser = &eu
	}
	o.mu.Lock()
	// A stored answer replayed charges nothing: no operation runs. An
	// operation that answers a retry with what the call's earlier attempt
	// made (a replayed order, send or swap, a call's hold taken over)
	// owes the hold it inherits to that attempt's event, named by the
	// hold (credits.EventNamer), and writes that event again: the store
	// keeps it once, whether or not the attempt lived to write it.
	code, charged := o.code, o.charged
	var named time.Time
	var inherited []idempotency.Charged
	st := stateFrom(r.Context())
	if st != nil {
		named, inherited = st.named, st.inherited
	}
	o.mu.Unlock()
	if status >= 400 {
		if code == "" && status == http.StatusInternalServerError {
			code = apierr.Internal
		}
		if code != "" {
			c := string(code)
			e.Code = &c
		}
	}
	e.ChargedMicro = charged
	if !named.IsZero() {
		e.Name(e.RequestID, named)
	}
	if st != nil {
		for i := range st.owed {
			k.recordOwed(r.Context(), e, &st.owed[i])
		}
	}
	for i := range inherited {
		k.recordOwed(r.Context(), e, &inherited[i])
	}
	if sh, ok := k.cfg.Audit.(lineShipper); ok && sh.Ships() {
		if st != nil {
			// The access line, written once the response is complete,
			// carries the event: one line per request, not two.
			prepared, err := sh.Prepare(e)
			if err != nil {
				Logger(r.Context()).Error("audit record failed", "error", err.Error())
				return
			}
			st.shipped = &prepared
			return
		}
	}
	// The answer is known: the event is written even when the request's
	// own deadline has passed, within the recorder's own bound.
	if err := k.cfg.Audit.Record(withoutCancel(r.Context()), e); err != nil {
		Logger(r.Context()).Error("audit record failed", "error", err.Error())
	}
}

// nameCharge fixes the name of the audit event of a request whose
// operation charged credits, as its answer is about to be stored (unless
// a hold it took fixed it already), and returns the charge to store with
// it. The event is written after the answer is stored, so a process that
// dies in between leaves the charge on no event; a replay of the answer
// then writes it (recordOwed) under the same name, which a store keeps
// once.
func (k *Kernel) nameCharge(ctx context.Context) *idempotency.Charged {
	st := stateFrom(ctx)
	if st == nil || k.cfg.Audit == nil {
		return nil
	}
	st.outcome.mu.Lock()
	charged := st.outcome.charged
	st.outcome.mu.Unlock()
	if charged == 0 {
		return nil
	}
	name := st.NameCharge()
	return &idempotency.Charged{Micro: charged, RequestID: name.RequestID, AtMilli: name.AtMilli}
}

// owedBy is what the request in ctx owes to earlier attempts' events, to
// store with its answer.
func owedBy(ctx context.Context) []idempotency.Charged {
	st := stateFrom(ctx)
	if st == nil {
		return nil
	}
	st.outcome.mu.Lock()
	defer st.outcome.mu.Unlock()
	return slices.Clone(st.inherited)
}

// recordOwed writes again the event of the call whose stored answer the
// request e records replays: the request, the time and the charge the
// answer was stored with, the rest as the replay's. Where the call's own
// process wrote it, the store keeps that one.
func (k *Kernel) recordOwed(ctx context.Context, e audit.Event, c *idempotency.Charged) {
	e.IdempotentReplayed = false
	e.ChargedMicro = c.Micro
	e.Name(c.RequestID, time.UnixMilli(c.AtMilli))
	if err := k.cfg.Audit.Record(withoutCancel(ctx), e); err != nil {
		Logger(ctx).Error("audit record failed", "error", err.Error())
	}
}

// lineShipper is a recorder that ships events on log lines
// (audit.NewShippingRecorder): the kernel folds each request's event into
// its access line.
type lineShipper interface {
	Ships() bool
	Prepare(audit.Event) (audit.Event, error)
}

// auditOperation is the route's operation, refined for invokes and runs to
// services.invoke.<service>.<operation> when the catalogue knows the
// operation (or .<service> when it knows only the service), so usage can be
// grouped by the capability called. A name the client made up never
// becomes an operation: it would be unbounded cardinality in the counters.
func auditOperation(rt routes.Route, svc, op string) string {
	exact := keys.RequestOperation(rt.Operation, svc, op)
	if exact == rt.Operation {
		return exact
	}
	s, ok := catalog.Lookup(svc)
	if !ok {
		return rt.Operation
	}
	if o, ok := s.Op(op); ok && (rt.Operation == "services.invoke" && o.Invocable || rt.Operation == "runs.create" && o.Durable) {
		return exact
	}
	return rt.Operation + "." + svc
}
