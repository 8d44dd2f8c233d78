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

// RequestKey is the context key under which ForRequest keeps a request's
// Request. A context that carries its request's state itself (the API
// kernel's request context) answers this key with a Request of its own, so
// that marking a request costs no context.WithValue and no closures.
var RequestKey any = attrKey{}

// Request is a request's side of the changes made in its context: who made
// them (asked only when a change is made, so a request that charges
// nothing pays nothing for knowing who it is) and where what they charged
// is added up (the request's audit event).
type Request interface {
	Attribution() Attribution
	Charged(micro int64)
}

type attributed struct {
	attr func() Attribution
	note func(chargedMicro int64)
}

func (a attributed) Attribution() Attribution { return a.attr() }

func (a attributed) Charged(micro int64) {
	if a.note != nil {
		a.note(micro)
	}
}

// ForRequest marks ctx as a request's: every change made in it carries
// attr's answer and reports what it charged to note, which the request's
// audit event adds up. Whatever group charges, the request's event shows
// it. attr is called only when a change is made.
func ForRequest(ctx context.Context, attr func() Attribution, note func(chargedMicro int64)) context.Context {
	return WithRequest(ctx, attributed{attr: attr, note: note})
}

// WithRequest marks ctx as r's request, as ForRequest does.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, attrKey{}, r)
}

// ForKey marks ctx as work done outside any request for the key a made
// (a durable run's steps): each change made in it writes its own audit
// event, named by a's operation.
func ForKey(ctx context.Context, a Attribution) context.Context {
	return context.WithValue(ctx, attrKey{}, attributed{attr: func() Attribution { return a }})
}

func attributionFrom(ctx context.Context) Attribution {
	if r, ok := ctx.Value(attrKey{}).(Request); ok {
		return r.Attribution()
	}
	return Attribution{}
}

// noteFrom is where ctx's request adds up its charges; nil outside a
// request (ForKey's work included, whose changes write their own events).
func noteFrom(ctx context.Context) func(int64) {
	switch r := ctx.Value(attrKey{}).(type) {
	case attributed:
		return r.note
	case Request:
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
