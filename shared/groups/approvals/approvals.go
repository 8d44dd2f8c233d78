// Package approvals holds service-action approvals (docs/approvals.md):
// a pending approval bound to one service, operation and canonical input;
// decided once (approve or reject); consumed exactly once by the invoke it
// was made for, also under concurrent invokes. Approvals expire 24 hours
// after they are requested, whether pending or approved and unused.
package approvals

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/base/strictjson"
	"platformapi/shared/domain/paging"
	"platformapi/shared/groups/keys"
)

// TTL is how long an approval stays usable after it is requested.
const TTL = 24 * time.Hour

// Status values. "expired" is never stored; it is what an unused approval
// past its expiry reads as.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
	StatusConsumed = "consumed"
	StatusExpired  = "expired"
)

// Approval is the resource.
type Approval struct {
	ID          string          `json:"id"`
	ServiceID   string          `json:"serviceId"`
	OperationID string          `json:"operationId"`
	Input       json.RawMessage `json:"input" doc:"The exact input the approval is for, in canonical form"`
	InputSHA256 string          `json:"inputSha256" doc:"SHA-256 of the canonical input; an invoke must send input with the same canonical form"`
	Status      string          `json:"status" enum:"pending,approved,rejected,consumed,expired"`
	Reason      *string         `json:"reason"`
	ProjectID   *string         `json:"projectId"`
	RequestedBy string          `json:"requestedBy" doc:"Id of the API key that asked"`
	DecidedBy   *string         `json:"decidedBy"`
	CreatedAt   time.Time       `json:"createdAt"`
	ExpiresAt   time.Time       `json:"expiresAt"`
	DecidedAt   *time.Time      `json:"decidedAt"`
	ConsumedAt  *time.Time      `json:"consumedAt"`
}

// Canonical re-encodes JSON with sorted object keys and no insignificant
// whitespace, so that semantically equal inputs bind to the same approval.
// An input with duplicate or case-variant keys, or with anything after its
// value, has no canonical form (strictjson): sorting would keep one reading
// of it while a service decoding case-insensitively may take another, and
// the approval would authorise what nobody saw.
func Canonical(input json.RawMessage) ([]byte, string, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	if err := strictjson.Check(input); err != nil {
		return nil, "", err
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "", err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(out)
	return out, hex.EncodeToString(sum[:]), nil
}

// inputError is the validation error of an input without a canonical form.
func inputError(err error) error {
	var ke *strictjson.KeyError
	if errors.As(err, &ke) {
		return apierr.Invalid("input has ambiguous keys.", apierr.Field(ke.Location("body.input"), "%s", ke.Message()))
	}
	return apierr.Invalid("input is not valid JSON.", apierr.Field("body.input", "%s", err.Error()))
}

func itemKey(accountID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "apr#" + id}
}

// Repo persists approvals.
type Repo struct {
	st  store.Store
	now func() time.Time
}

// NewRepo builds an approval repository.
func NewRepo(st store.Store, now func() time.Time) *Repo { return &Repo{st: st, now: now} }

func (r *Repo) view(a *Approval) *Approval {
	if (a.Status == StatusPending || a.Status == StatusApproved) && !r.now().Before(a.ExpiresAt) {
		a.Status = StatusExpired
	}
	return a
}

func encode(accountID string, a *Approval) store.Item {
	it := store.NewItem(itemKey(accountID, a.ID))
	it.SetDoc(a)
	it["status"] = a.Status
	return it
}

func decode(it store.Item) (*Approval, error) {
	var a Approval
	if err := it.Doc(&a); err != nil {
		return nil, fmt.Errorf("approvals: decode: %w", err)
	}
	return &a, nil
}

// Create records a pending approval for exactly this input.
func (r *Repo) Create(ctx context.Context, accountID string, projectID *string, keyID, serviceID, operationID string, input json.RawMessage) (*Approval, error) {
	return r.CreateWith(ctx, accountID, projectID, keyID, serviceID, operationID, input, nil)
}

// CreateWith is Create with the caller's writes about the new approval
// (its approval.requested event) in the same transaction, so that they
// exist exactly when the approval does. with may be nil.
func (r *Repo) CreateWith(ctx context.Context, accountID string, projectID *string, keyID, serviceID, operationID string, input json.RawMessage,
	with func(*Approval) ([]store.Op, error)) (*Approval, error) {
	canon, sum, err := Canonical(input)
	if err != nil {
		return nil, inputError(err)
	}
	now := r.now().UTC()
	a := &Approval{ID: ids.New("apr", now), ServiceID: serviceID, OperationID: operationID, Input: canon, InputSHA256: sum,
		Status: StatusPending, ProjectID: projectID, RequestedBy: keyID, CreatedAt: now, ExpiresAt: now.Add(TTL)}
	put := store.PutOp(encode(accountID, a), store.NotExists())
	var extra []store.Op
	if with != nil {
		if extra, err = with(a); err != nil {
			return nil, err
		}
	}
	// Alone, the approval is one conditional put: half a transaction's
	// write units on DynamoDB.
	if len(extra) == 0 {
		err = r.st.Put(ctx, put.Item, put.Conds...)
	} else {
		err = r.st.Transact(ctx, append([]store.Op{put}, extra...))
	}
	if err != nil {
		return nil, fmt.Errorf("approvals: create: %w", err)
	}
	return a, nil
}

var errNotFound = apierr.New(apierr.NotFound, "No such approval.")

// Get reads an approval visible in scope: a project scope sees only its
// project's approvals; everything else is not_found.
func (r *Repo) Get(ctx context.Context, accountID, projectScope, id string) (*Approval, error) {
	if !ids.Valid("apr", id) {
		return nil, errNotFound
	}
	it, err := r.st.Get(ctx, itemKey(accountID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("approvals: get: %w", err)
	}
	a, err := decode(it)
	if err != nil {
		return nil, err
	}
	if projectScope != "" && (a.ProjectID == nil || *a.ProjectID != projectScope) {
		return nil, errNotFound
	}
	return r.view(a), nil
}

// List pages through the account's approvals in scope, oldest first,
// optionally only one status.
func (r *Repo) List(ctx context.Context, accountID, projectScope, status string, limit int, cursor string) ([]*Approval, string, error) {
	after, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	var out []*Approval
	for {
		page, err := r.st.Query(ctx, store.Query{PK: "acct#" + accountID, Prefix: "apr#", After: after, Limit: limit})
		if err != nil {
			return nil, "", fmt.Errorf("approvals: list: %w", err)
		}
		for i, it := range page.Items {
			after = it.Key().SK
			a, err := decode(it)
			if err != nil {
				return nil, "", err
			}
			a = r.view(a)
			if projectScope != "" && (a.ProjectID == nil || *a.ProjectID != projectScope) || status != "" && a.Status != status {
				continue
			}
			out = append(out, a)
			if len(out) == limit {
				next := ""
				if page.More || i < len(page.Items)-1 {
					next = paging.Cursor(after)
				}
				return out, next, nil
			}
		}
		if !page.More {
			return out, "", nil
		}
	}
}

// transition moves an approval from one stored status to another with a
// conditional write, so concurrent deciders or consumers cannot both win.
func (r *Repo) transition(ctx context.Context, accountID string, a *Approval, from string, change func(*Approval)) error {
	change(a)
	_, err := r.st.Update(ctx, itemKey(accountID, a.ID), store.Update{Set: map[string]any{store.AttrDoc: store.DocOf(a), "status": a.Status}}, store.AttrEquals("status", from))
	return err
}

// DistinctDecider are the services whose approvals no key of the
// requester's lineage may decide (see outsideLineage): moving money needs a
// second holder, not a second call, and every key in the lineage is the
// requester again. Every service that asks for an approval with money at
// stake is here. Service actions (docs/approvals.md) keep the worker key
// that asks and decides: a narrow worker key holds approvals.create and
// approvals.decide beside the gated operation, and that is enough.
var DistinctDecider = map[string]bool{"managed-wallets": true, "universal-swaps": true}

// outsideLineage refuses a decider in the lineage of the approval's stored
// requester R. The lineage is R's roll chain (every predecessor and
// successor, transitively), R's ancestors with their roll chains (a rolled
// parent's successor is still that parent), and the descendants of any key
// of R's roll chain. Each of them is R's holder again: a key R was rolled
// from or into is R under another secret, an ancestor can mint or roll R
// (or be rolled itself), and a descendant is minted by R's holder. Anyone
// else (a sibling, a cousin, a sibling of an ancestor) may decide.
//
// The roll chains are read from the store; a chain longer than
// keys.MaxRollChain is refused, never read in part.
func (r *Repo) outsideLineage(ctx context.Context, a *Approval, decider *keys.Key) error {
	denied := apierr.New(apierr.SelfApprovalDenied, "Key %s is in the lineage of the key that requested this approval (the requester, a key it was rolled from or into, an ancestor, or a descendant); mint an approver key outside the requester's lineage, e.g. one beside it under the same parent, and decide with that key.", decider.ID)
	requester, err := r.rollChain(ctx, a.RequestedBy, "The requester's")
	if err != nil {
		return err
	}
	rolled := func(id string) bool {
		return slices.ContainsFunc(requester, func(k *keys.Key) bool { return k.ID == id })
	}
	ancestors := requester[0].Ancestors
	if rolled(decider.ID) || slices.ContainsFunc(decider.Ancestors, rolled) || slices.Contains(ancestors, decider.ID) {
		return denied
	}
	// A key placed where an ancestor is (same ancestors above it) is that
	// ancestor rolled, or a sibling of it; only its roll chain tells.
	depth := len(decider.Ancestors)
	if depth < len(ancestors) && slices.Equal(decider.Ancestors, ancestors[:depth]) {
		chain, err := r.rollChain(ctx, decider.ID, "The deciding key's")
		if err != nil {
			return err
		}
		if slices.ContainsFunc(chain, func(k *keys.Key) bool { return k.ID == ancestors[depth] }) {
			return denied
		}
	}
	return nil
}

// rollChain reads key id's roll chain, refusing the decision when it is
// longer than can be read.
func (r *Repo) rollChain(ctx context.Context, id, whose string) ([]*keys.Key, error) {
	chain, err := keys.RollChain(ctx, r.st, id)
	if errors.Is(err, keys.ErrRollChainTooLong) {
		return nil, apierr.New(apierr.SelfApprovalDenied, "%s roll chain is longer than %d keys, so whether this key is outside the requester's lineage cannot be told; the approval stays pending until it expires.", whose, keys.MaxRollChain)
	}
	if err != nil {
		return nil, fmt.Errorf("approvals: lineage: %w", err)
	}
	return chain, nil
}

// Decide approves or rejects a pending, unexpired approval on decider's
// authority.
func (r *Repo) Decide(ctx context.Context, accountID, projectScope, id, decision string, reason *string, decider *keys.Key) (*Approval, error) {
	a, err := r.Get(ctx, accountID, projectScope, id)
	if err != nil {
		return nil, err
	}
	if a.Status != StatusPending {
		return nil, apierr.New(apierr.Conflict, "The approval is %s and can no longer be decided.", a.Status)
	}
	if DistinctDecider[a.ServiceID] {
		if err := r.outsideLineage(ctx, a, decider); err != nil {
			return nil, err
		}
	}
	keyID := decider.ID
	now := r.now().UTC()
	err = r.transition(ctx, accountID, a, StatusPending, func(a *Approval) {
		a.Status = map[string]string{"approve": StatusApproved, "reject": StatusRejected}[decision]
		a.Reason, a.DecidedBy, a.DecidedAt = reason, &keyID, &now
	})
	if errors.Is(err, store.ErrConditionFailed) {
		return nil, apierr.New(apierr.Conflict, "The approval was decided concurrently.")
	}
	if err != nil {
		return nil, fmt.Errorf("approvals: decide: %w", err)
	}
	return a, nil
}

// Consume uses an approved approval for exactly this service, operation and
// input, once. The returned undo puts it back to approved when the operation
// it was consumed for did not happen (the upstream refused or failed).
func (r *Repo) Consume(ctx context.Context, accountID, projectScope, id, serviceID, operationID string, input json.RawMessage) (undo func(context.Context) error, err error) {
	denied := func(why string) error {
		return apierr.New(apierr.ApprovalRequired, "%s needs an approved, unused approval for exactly this input: %s.", operationID, why)
	}
	a, err := r.Get(ctx, accountID, projectScope, id)
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.Code == apierr.NotFound {
		return nil, denied("no such approval")
	}
	if err != nil {
		return nil, err
	}
	_, sum, err := Canonical(input)
	if err != nil {
		return nil, inputError(err)
	}
	switch {
	case a.ServiceID != serviceID || a.OperationID != operationID:
		return nil, denied("the approval is for another operation")
	case a.InputSHA256 != sum:
		return nil, denied("the approval is for another input")
	case a.Status != StatusApproved:
		return nil, denied("the approval is " + a.Status)
	}
	now := r.now().UTC()
	err = r.transition(ctx, accountID, a, StatusApproved, func(a *Approval) { a.Status, a.ConsumedAt = StatusConsumed, &now })
	if errors.Is(err, store.ErrConditionFailed) {
		return nil, denied("the approval was just used")
	}
	if err != nil {
		return nil, fmt.Errorf("approvals: consume: %w", err)
	}
	return func(ctx context.Context) error {
		return r.transition(ctx, accountID, a, StatusConsumed, func(a *Approval) { a.Status, a.ConsumedAt = StatusApproved, nil })
	}, nil
}
