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

type attrKey struct{}

// RequestKey is the context key under which WithRequest keeps a request's
// Request. A context that carries its request's state itself (the API
// kernel's request context) answers this key with a Request of its own, so
// that marking a request costs no context.WithValue.
var RequestKey any = attrKey{}

// Request is a request's side of the changes made in its context: who made
// them (asked only when a change is made, so a request that charges
// nothing pays nothing for knowing who it is) and where what they charged
// is added up (the request's audit event). Whatever group charges, the
// request's event shows it.
type Request interface {
	Attribution() Attribution
	Charged(micro int64)
}

// WithRequest marks ctx as r's request: every change made in it carries
// r's attribution and reports what it charged to r.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, attrKey{}, r)
}

// keyWork is ForKey's mark. It is no Request: its changes write their own
// audit events, so nothing adds up what they charge.
type keyWork Attribution

// ForKey marks ctx as work done outside any request for the key a made
// (a durable run's steps): each change made in it writes its own audit
// event, named by a's operation.
func ForKey(ctx context.Context, a Attribution) context.Context {
	return context.WithValue(ctx, attrKey{}, keyWork(a))
}

func attributionFrom(ctx context.Context) Attribution {
	switch r := ctx.Value(attrKey{}).(type) {
	case keyWork:
		return Attribution(r)
	case Request:
		return r.Attribution()
	}
	return Attribution{}
}

// noteFrom is where ctx's request adds up its charges; nil outside a
// request (ForKey's work included).
func noteFrom(ctx context.Context) func(int64) {
	if r, ok := ctx.Value(attrKey{}).(Request); ok {
		return r.Charged
	}
	return nil
}

type settleKey struct{}

// SettledBy names, for the audit event of a hold settled in ctx outside a
// request, what settled it (trading.orders.fill, wallets.transactions.confirm).
func SettledBy(ctx context.Context, operation string) context.Context {
	return context.WithValue(ctx, settleKey{}, operation)
}

func settledBy(ctx context.Context, fallback string) string {
	if op, _ := ctx.Value(settleKey{}).(string); op != "" {
		return op
	}
	return fallback
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
	if n, ok := ctx.Value(attrKey{}).(EventNamer); ok {
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
	if n, ok := ctx.Value(attrKey{}).(EventNamer); ok && name.RequestID != "" {
		n.Owe(micro, name)
		return
	}
	if note := noteFrom(ctx); note != nil {
		note(micro)
	}
}
