package webhooks

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apitime"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/idempotency"
)

// The outbox holds each event from the moment the write that causes it
// commits until it is fanned out into deliveries (Svix's and Stripe's
// design): an event is never announced for a write that did not happen,
// and never lost for one that did, whatever crashes in between.
//
// Storage (single table, spread over OutboxShards partitions so that no
// item bounds the deployment's event rate):
//
//	evo#<shard> | <evt id>     an event not yet fanned out; doc JSON with
//	                           the exact delivery body; deleted after the
//	                           fan-out
//	acct#<acct> | evk#<hash>   the event an idempotent call published
//	                           outside a unit, so that a retry of the call
//	                           records it once; expires with the call's
//	                           stored response
const (
	outboxPrefix = "evo#"
	// OutboxShards is how many partitions hold the outbox.
	OutboxShards = 16
	// OutboxGrace is how old an outbox item must be before the periodic
	// sweep takes it: younger ones may still be fanned out by the request
	// that recorded them (a request lasts 30 s at most).
	OutboxGrace = time.Minute
)

// outboxEvent is one outbox item: the payload and its exact JSON body.
type outboxEvent struct {
	Payload Payload         `json:"payload"`
	Body    json.RawMessage `json:"body"`
}

func outboxKey(eventID string) store.Key {
	h := fnv.New32a()
	h.Write([]byte(eventID))
	return store.Key{PK: fmt.Sprintf("%s%02d", outboxPrefix, h.Sum32()%OutboxShards), SK: eventID}
}

type callKey struct{}

// WithCallID names the idempotent call publishing on ctx (api.CallID): an
// event it publishes outside an idempotency unit is recorded once per call
// id, event and data, so that the retry of a call whose first attempt died
// after publishing but before its response was stored publishes nothing
// twice.
func WithCallID(ctx context.Context, callID string) context.Context {
	if callID == "" {
		return ctx
	}
	return context.WithValue(ctx, callKey{}, callID)
}

// record builds the event and stores it in the outbox: in ctx's unit when
// there is one, else at once (with the call's marker where ctx names a
// call). A nil event with no error is one an earlier attempt of the same
// call already recorded.
func (r *Repo) record(ctx context.Context, accountID, projectID, event string, data any) (*outboxEvent, error) {
	e, it, raw, err := r.outboxItem(accountID, projectID, event, data)
	if err != nil {
		return nil, err
	}
	now := e.Payload.CreatedAt
	call, _ := ctx.Value(callKey{}).(string)
	if call == "" || idempotency.InUnit(ctx) {
		if err := idempotency.Deferring(r.st).Put(ctx, it); err != nil {
			return nil, fmt.Errorf("webhooks: record event %s: %w", event, err)
		}
		return e, nil
	}
	sum := sha256.Sum256([]byte("platform-api/event/v1\n" + call + "\n" + event + "\n" + string(raw)))
	m := store.NewItem(store.Key{PK: "acct#" + accountID, SK: "evk#" + hex.EncodeToString(sum[:16])})
	m[store.AttrExpiresAt] = now.Add(idempotency.Retention).Unix()
	err = r.st.Transact(ctx, []store.Op{store.PutOp(it), store.PutOp(m, store.NotExists())})
	var tx *store.TxError
	switch {
	case errors.As(err, &tx) && tx.Index == 1:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("webhooks: record event %s: %w", event, err)
	}
	return e, nil
}

// outboxItem builds event's payload and its outbox item, and returns the
// data as encoded.
func (r *Repo) outboxItem(accountID, projectID, event string, data any) (*outboxEvent, store.Item, []byte, error) {
	if _, ok := eventType(event); !ok {
		return nil, nil, nil, fmt.Errorf("webhooks: publish: event %q is not in the catalogue", event)
	}
	raw, err := apitime.Marshal(data)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("webhooks: publish %s: %w", event, err)
	}
	now := r.now().UTC()
	p := Payload{ID: ids.New("evt", now), Type: event, CreatedAt: now, AccountID: accountID, Data: raw}
	if projectID != "" {
		p.ProjectID = &projectID
	}
	body, _ := apitime.Marshal(p) // the delivered bytes: times as in responses
	if len(body) > MaxPayload {
		return nil, nil, nil, fmt.Errorf("webhooks: publish %s: payload of %d bytes exceeds %d", event, len(body), MaxPayload)
	}
	e := &outboxEvent{Payload: p, Body: body}
	it := store.NewItem(outboxKey(p.ID))
	it.SetDoc(e)
	it[store.AttrExpiresAt] = now.Add(DeliveryRetention).Unix()
	return e, it, raw, nil
}

// Outboxed is the event as a transaction member, for a domain that commits
// its writes itself: the caller puts the returned ops in the transaction
// that makes the change, so the event exists exactly when the change does,
// and calls dispatch once it committed (a dispatch lost to a crash is the
// outbox sweep's). Without a queue there are no ops and dispatch does
// nothing.
func (r *Repo) Outboxed(accountID, projectID, event string, data any) (ops []store.Op, dispatch func(context.Context), err error) {
	if r.q == nil {
		return nil, func(context.Context) {}, nil
	}
	e, it, _, err := r.outboxItem(accountID, projectID, event, data)
	if err != nil {
		return nil, nil, err
	}
	return []store.Op{store.PutOp(it)}, func(ctx context.Context) { r.dispatchOrLeave(ctx, e) }, nil
}

// dispatch fans e out and then takes it off the outbox.
func (r *Repo) dispatch(ctx context.Context, e *outboxEvent) error {
	if err := r.fanOut(ctx, e); err != nil {
		return err
	}
	if err := r.st.Delete(ctx, outboxKey(e.Payload.ID)); err != nil {
		return fmt.Errorf("webhooks: take %s off the outbox: %w", e.Payload.ID, err)
	}
	return nil
}

// SweepOutbox fans out every outbox event recorded before before, oldest
// first in each shard, and returns how many it took off the outbox. It is
// the catch-up after a crash: at the embedded server's start (before: the
// start) and every minute (before: OutboxGrace ago), and on AWS the
// scheduled webhook-outbox function. Running it twice at once, or beside
// the request that recorded an event, delivers nothing twice (see fanOut).
func (r *Repo) SweepOutbox(ctx context.Context, before time.Time) (int, error) {
	if r.q == nil {
		return 0, errors.New("webhooks: the outbox sweep needs the webhook queue")
	}
	var errs []error
	n := 0
	for shard := range OutboxShards {
		after := ""
		for {
			page, err := r.st.Query(ctx, store.Query{PK: fmt.Sprintf("%s%02d", outboxPrefix, shard), After: after, Limit: 100})
			if err != nil {
				errs = append(errs, fmt.Errorf("webhooks: read the outbox: %w", err))
				break
			}
			for _, it := range page.Items {
				after = it.Key().SK
				var e outboxEvent
				if err := it.Doc(&e); err != nil {
					errs = append(errs, fmt.Errorf("webhooks: decode outbox item %s: %w", it.Key(), err))
					continue
				}
				if !e.Payload.CreatedAt.Before(before) {
					continue
				}
				if err := r.dispatch(ctx, &e); err != nil {
					errs = append(errs, err)
					continue
				}
				n++
			}
			if !page.More {
				break
			}
		}
	}
	return n, errors.Join(errs...)
}

// OutboxPass is the scheduled outbox sweep (OutboxFunction): each
// pass fans out the events recorded more than OutboxGrace ago, whose
// request should long have fanned them out, and every event recorded before
// leftBefore: a process passes its start, so that its first pass takes at
// once what a previous process left.
func (r *Repo) OutboxPass(log *slog.Logger, leftBefore time.Time) func(context.Context) error {
	return func(ctx context.Context) error {
		before := r.now().Add(-OutboxGrace)
		if leftBefore.After(before) {
			before = leftBefore
		}
		n, err := r.SweepOutbox(ctx, before)
		if n > 0 {
			log.Info("outbox sweep", "dispatched", n)
		}
		return err
	}
}

// deliveryIDOf is the id of the delivery of event eventID to webhook
// webhookID: the event's time, so deliveries list in event order, and 80
// bits of a hash of both ids, so every fan-out of the event names the same
// delivery.
func deliveryIDOf(eventID, webhookID string) string {
	body, _ := strings.CutPrefix(eventID, "evt_")
	if len(body) != 26 {
		return ids.New("whd", time.Now())
	}
	sum := sha256.Sum256([]byte(eventID + "\n" + webhookID))
	hi, lo := uint64(binary.BigEndian.Uint16(sum[:2])), binary.BigEndian.Uint64(sum[2:10])
	var tail [16]byte
	for i := 15; i >= 0; i-- {
		tail[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return "whd_" + body[:10] + string(tail[:])
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
