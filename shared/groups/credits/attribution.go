package credits

import "context"

// Attribution says who caused a change of the balance: the request, the
// key that made it (its chain, root first, so that ancestors see it), the
// project and the operation. It is kept with every entry and every hold,
// so a charge settled later is still shown to the key that made it.
type Attribution struct {
	RequestID string   `json:"requestId,omitempty"`
	KeyPath   []string `json:"keyPath,omitempty"`
	ProjectID string   `json:"projectId,omitempty"`
	Operation string   `json:"operation,omitempty"`
}

// KeyID is the key that caused the change, "" for none.
func (a Attribution) KeyID() string {
	if len(a.KeyPath) == 0 {
		return ""
	}
	return a.KeyPath[len(a.KeyPath)-1]
}

// Request is a request's side of the changes made in its context: who made
// them (asked only when a change is made, so a request that charges
// nothing pays nothing for knowing who it is) and where what they charged
// is added up (the request's audit event). Whatever group charges, the
// request's event shows it.
type Request interface {
	Attribution() Attribution
	Charged(micro int64)
}

// Cause is everything a context says about the ledger changes made in it,
// in one value under one context key: the request they are made in, or
// the key a worker acts for outside any request, and what settles a hold
// outside a request. Whoever marks a context builds a Cause (ForRequest,
// ForKey, Settled) and every change reads it back with CauseOf.
type Cause struct {
	// request is the request the changes are made in; nil outside one.
	request Request
	// work is the key a worker acts for outside any request (a durable
	// run's step); its changes write audit events of their own.
	work Attribution
	// settledBy names what settles a hold outside a request.
	settledBy string
}

// ForRequest is the cause of the changes made in request r: each carries
// r's attribution and reports what it charged to r.
func ForRequest(r Request) Cause { return Cause{request: r} }

// ForKeyWork is the cause of work done outside any request for the key a
// made (a durable run's steps): each change made in it writes its own
// audit event, named by a's operation.
func ForKeyWork(a Attribution) Cause { return Cause{work: a} }

// Settled is c, naming what settles a hold (trading.orders.fill,
// wallets.transactions.confirm) for the audit event of a settlement made
// outside a request.
func (c Cause) Settled(operation string) Cause {
	c.settledBy = operation
	return c
}

// Attribution is who the changes are shown to: the request's or the key
// work's; none for a worker settling whoever took a hold.
func (c Cause) Attribution() Attribution {
	if c.request != nil {
		return c.request.Attribution()
	}
	return c.work
}

// Request is the request the changes are made in, where their charges add
// up; nil outside a request (a key's work included).
func (c Cause) Request() Request { return c.request }

// SettledBy is what settles a hold outside a request, or fallback.
func (c Cause) SettledBy(fallback string) string {
	if c.settledBy != "" {
		return c.settledBy
	}
	return fallback
}

type causeKey struct{}

// CauseKey is the context key CauseOf reads, as a *Cause. A context that
// carries its request's state itself (the API kernel's request context)
// answers it with a Cause kept in that state, so that marking a request
// costs no context.WithValue and no allocation.
var CauseKey any = causeKey{}

// WithCause marks ctx with c; it replaces whatever cause ctx had.
func WithCause(ctx context.Context, c Cause) context.Context {
	return context.WithValue(ctx, causeKey{}, &c)
}

// CauseOf is ctx's cause; the zero Cause (no request, no key, nothing
// named) when none was marked.
func CauseOf(ctx context.Context) Cause {
	if c, _ := ctx.Value(causeKey{}).(*Cause); c != nil {
		return *c
	}
	return Cause{}
}

// WithRequest marks ctx as r's request (ForRequest).
func WithRequest(ctx context.Context, r Request) context.Context {
	return WithCause(ctx, ForRequest(r))
}

// ForKey marks ctx as work done outside any request for the key a made
// (ForKeyWork).
func ForKey(ctx context.Context, a Attribution) context.Context {
	return WithCause(ctx, ForKeyWork(a))
}

// SettledBy names, for the audit event of a hold settled in ctx outside a
// request, what settled it (Settled), keeping the rest of ctx's cause.
func SettledBy(ctx context.Context, operation string) context.Context {
	return WithCause(ctx, CauseOf(ctx).Settled(operation))
}

// noteOf is where c's request adds up its charges; nil outside a request
// (a key's work included).
func noteOf(c Cause) func(int64) {
	if c.request != nil {
		return c.request.Charged
	}
	return nil
}

// ChargeName names the audit event that carries a charge: its request and
// the moment that request's event is said to occur. A hold keeps the name
// of the request that took it, so that a later attempt of the same call,
// which finds the hold and cannot know whether that request's event was
// written, writes the charge under the same name, and the audit store,
// which keeps an event once per name, counts it once.
type ChargeName struct {
	RequestID string
	AtMilli   int64
}

// EventNamer is a Request whose audit event can be named before it ends
// (the API kernel's requests): NameCharge fixes the name (the first call
// decides, later ones return it), and Owe records a charge on the event of
// another request, named, rather than on this one's.
type EventNamer interface {
	NameCharge() ChargeName
	Owe(micro int64, name ChargeName)
}

// nameCharge is the name of the audit event of ctx's request, fixed now if
// it was not yet; zero where ctx's request cannot be named.
func nameCharge(ctx context.Context) ChargeName {
	if n, ok := CauseOf(ctx).Request().(EventNamer); ok {
		return n.NameCharge()
	}
	return ChargeName{}
}

// owe reports to ctx's request a charge that an earlier attempt of its call
// made under name: recorded on that attempt's event (Owe), or, for a hold
// taken before holds kept a name, on this request's own event.
func owe(ctx context.Context, micro int64, name ChargeName) {
	if micro == 0 {
		return
	}
	if n, ok := CauseOf(ctx).Request().(EventNamer); ok && name.RequestID != "" {
		n.Owe(micro, name)
		return
	}
	if note := noteOf(CauseOf(ctx)); note != nil {
		note(micro)
	}
}
