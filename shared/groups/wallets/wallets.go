// Package wallets is managed wallets (docs/wallets.md): EVM keys
// generated here and kept sealed by the envelope port, a policy engine
// (package policy) consulted on every send and signature, transactions
// driven through their states by a worker, and EIP-191/EIP-712 signatures
// (package signing). It holds no HTTP and no AWS types.
//
// Invariants: a private key is opened only to sign and never leaves this
// package; one wallet's nonces are assigned by a conditional write, so two
// sends never share one; a transaction is signed once, recorded with its
// nonce before it is broadcast, and rebroadcast (never re-signed) after a
// crash; a rolling spend cap is reserved in the same transaction that
// creates the send, so concurrent sends cannot exceed it.
//
// Storage (single table, in the account's partition; <p> is the project id
// or "-"):
//
//	acct#<acct> | wal#<p>#<id>            the wallet: doc, key (sealed), policy, spends,
//	                                      rev, n<chainId> (next nonce per chain)
//	acct#<acct> | wtq#<p>#<id>            a transaction quote: doc, validUntil (ms), used
//	acct#<acct> | wtx#<p>#<wallet>#<id>   a transaction: doc, rev, status
//	acct#<acct> | wsq#<p>#<id>            a signature quote: doc, validUntil (ms), used
//	wallets#open | <txId>                 acct, project, wallet: transactions not yet final
//	                                      (or with a settlement pending), for Recheck
//	acct#<acct> | hold#<id>               a transaction's credit hold (package credits)
package wallets

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/outbox"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/chain"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/domain/paging"
	"platformapi/shared/groups/approvals"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/wallets/policy"
)

// ServiceID is the managed service wallets belong to (approvals name it).
const ServiceID = "managed-wallets"

// Operation ids the policy and approvals use.
const (
	OpTransactionsCreate = "wallets.transactions.create"
	OpSignaturesCreate   = "wallets.signatures.create"
)

// Lifetimes.
const (
	// TxQuoteTTL is how long a transaction quote can be executed.
	TxQuoteTTL = 60 * time.Second
	// SigQuoteTTL is how long a signature quote without approval lives; one
	// that needs approval lives as long as its approval.
	SigQuoteTTL = 5 * time.Minute
	// SubmitDeadline is how long a queued transaction may wait to be
	// broadcast (its predecessor, a chain outage) before it expires.
	SubmitDeadline = time.Hour
	// ConfirmDeadline bounds how long a submitted transaction is watched
	// before its credit hold is released; the chain decides its fate, and
	// a later receipt still confirms it.
	ConfirmDeadline = 24 * time.Hour
)

// Scope is the account and project ("" for account level) a caller acts in.
type Scope struct {
	AccountID string
	ProjectID string
}

func (s Scope) part() string {
	if s.ProjectID == "" {
		return "-"
	}
	return s.ProjectID
}

func (s Scope) key(kind, rest string) store.Key {
	return store.Key{PK: "acct#" + s.AccountID, SK: kind + "#" + s.part() + "#" + rest}
}

func openKey(txID string) store.Key { return store.Key{PK: "wallets#open", SK: txID} }

// events are the events of one transaction: their ops, to append to it,
// and their fan-outs, to run once it committed.
type events struct {
	ops      []store.Op
	dispatch []func(context.Context)
}

// add records event in evs; without an outbox there is nothing to record.
func (s *Service) add(evs *events, accountID, projectID, event string, data any) error {
	if s.outbox == nil {
		return nil
	}
	ops, dispatch, err := s.outbox.Outboxed(accountID, projectID, event, data)
	if err != nil {
		return fmt.Errorf("wallets: event %s: %w", event, err)
	}
	evs.ops, evs.dispatch = append(evs.ops, ops...), append(evs.dispatch, dispatch)
	return nil
}

// send fans the events out once their transaction committed, whatever
// became of the request.
func (evs *events) send(ctx context.Context) {
	for _, d := range evs.dispatch {
		d(context.WithoutCancel(ctx))
	}
}

// Config are a Service's dependencies.
type Config struct {
	Store    store.Store
	Sealer   envelope.Sealer
	Networks *chain.Networks
	// Queue carries transactions to the worker; nil leaves them to Recheck.
	Queue queue.Queue
	// Outbox records each change's event in the change's transaction.
	Outbox outbox.Recorder
	// PriceMicro is what wallets.transactions.create costs.
	PriceMicro int64
	// OnSwapTx is told when a swap's transaction changes state (the swaps
	// service refreshes the swap and publishes swap.<status>).
	OnSwapTx func(ctx context.Context, sc Scope, swapID string)
	Now      func() time.Time
	Logger   *slog.Logger
}

// Service is managed wallets.
type Service struct {
	st        store.Store
	sealer    envelope.Sealer
	nets      *chain.Networks
	q         queue.Queue
	outbox    outbox.Recorder
	ledger    *credits.Ledger
	approvals *approvals.Repo
	price     int64
	onSwapTx  func(context.Context, Scope, string)
	now       func() time.Time
	log       *slog.Logger
}

// New builds a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	now := func() time.Time { return cfg.Now().UTC() }
	// Creating a wallet and replacing its policy are single writes the
	// kernel commits with their idempotent response (routes.Commit); every
	// other write passes straight through (no unit in its context).
	st := idempotency.Deferring(cfg.Store)
	return &Service{st: st, sealer: cfg.Sealer, nets: cfg.Networks, q: cfg.Queue, outbox: cfg.Outbox,
		ledger: credits.NewLedger(cfg.Store, now), approvals: approvals.NewRepo(cfg.Store, now), price: cfg.PriceMicro, onSwapTx: cfg.OnSwapTx, now: now, log: cfg.Logger}
}

// Networks are the chains the service reaches.
func (s *Service) Networks() *chain.Networks { return s.nets }

// Wallet is the wallet record clients see.
type Wallet struct {
	ID        string        `json:"id" example:"wal_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	Address   string        `json:"address" doc:"EIP-55 checksummed address" example:"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"`
	ChainIDs  []uint64      `json:"chainIds" doc:"The chains this deployment reaches; the address is the same on each" example:"[1337]"`
	Label     *string       `json:"label"`
	Status    string        `json:"status" enum:"active" example:"active"`
	Policy    policy.Policy `json:"policy"`
	ProjectID *string       `json:"projectId"`
	CreatedAt time.Time     `json:"createdAt"`
}

// walletRec is the wallet as stored, without its key, policy and spends
// (attributes of their own, so a policy update and a send's reservation
// are single conditional writes).
type walletRec struct {
	ID        string    `json:"id"`
	AccountID string    `json:"accountId"`
	ProjectID string    `json:"projectId"`
	Address   string    `json:"address"`
	Label     string    `json:"label,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// loaded is a wallet item read whole.
type loaded struct {
	rec    walletRec
	policy policy.Policy
	spends []spend
	rev    int64
	item   store.Item
}

// spend is one reservation against rolling totals.
type spend struct {
	Asset  string    `json:"asset"`
	Amount string    `json:"amount"`
	At     time.Time `json:"at"`
	TxID   string    `json:"tx"`
}

func (s *Service) view(l *loaded) *Wallet {
	w := &Wallet{ID: l.rec.ID, Address: l.rec.Address, ChainIDs: s.nets.IDs(), Status: "active", Policy: l.policy, CreatedAt: l.rec.CreatedAt}
	if w.ChainIDs == nil {
		w.ChainIDs = []uint64{}
	}
	if l.rec.Label != "" {
		w.Label = &l.rec.Label
	}
	if l.rec.ProjectID != "" {
		w.ProjectID = &l.rec.ProjectID
	}
	return w
}

// keyAD binds a sealed key to its account, wallet and address: a sealed key
// copied into another record does not open.
func keyAD(accountID, walletID, address string) []byte {
	return []byte("wallet-key\x00" + accountID + "\x00" + walletID + "\x00" + address)
}

// WalletCreateRequest is the body of POST /wallets.
type WalletCreateRequest struct {
	Label *string `json:"label,omitempty" maxLength:"200" doc:"A name for people; not unique"`
}

// Create generates a key, seals it and stores the wallet in one Put (safe
// to defer into the idempotent response's transaction).
func (s *Service) Create(ctx context.Context, sc Scope, req WalletCreateRequest) (*Wallet, error) {
	if s.sealer == nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "Managed wallets need the envelope key, which this deployment does not have.")
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	defer zero(key)
	now := s.now()
	rec := walletRec{ID: ids.New("wal", now), AccountID: sc.AccountID, ProjectID: sc.ProjectID,
		Address: crypto.PubkeyToAddress(key.PublicKey).Hex(), CreatedAt: now}
	if req.Label != nil {
		rec.Label = *req.Label
	}
	raw := crypto.FromECDSA(key)
	sealed, err := s.sealer.Seal(ctx, raw, keyAD(sc.AccountID, rec.ID, rec.Address))
	clear(raw)
	if err != nil {
		return nil, fmt.Errorf("wallets: seal key: %w", err)
	}
	l := &loaded{rec: rec, policy: policy.Default(), rev: 1}
	it := store.NewItem(sc.key("wal", rec.ID))
	it.SetDoc(rec)
	it["key"] = sealed
	it["policy"] = store.DocOf(l.policy)
	it["prev"] = l.policy.Revision
	it["spends"] = store.DocOf([]spend{})
	it["rev"] = int64(1)
	if err := s.st.Put(ctx, it, store.NotExists()); err != nil {
		return nil, fmt.Errorf("wallets: create: %w", err)
	}
	return s.view(l), nil
}

// zero wipes a key's scalar once it has served, so the key lingers in
// memory no longer than its use.
func zero(k *ecdsa.PrivateKey) {
	if k == nil {
		return
	}
	//lint:ignore SA1019 a secp256k1 key's scalar has no other handle: crypto/ecdsa's Bytes and ParseRawPrivateKey take NIST curves only
	if d := k.D; d != nil {
		d.SetInt64(0)
	}
}

var errWalletNotFound = apierr.New(apierr.NotFound, "No such wallet.")

func (s *Service) load(ctx context.Context, sc Scope, id string) (*loaded, error) {
	it, err := s.st.Get(ctx, sc.key("wal", id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errWalletNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("wallets: read: %w", err)
	}
	return decodeWallet(it)
}

func decodeWallet(it store.Item) (*loaded, error) {
	l := &loaded{rev: it.Int("rev"), item: it}
	if err := it.Doc(&l.rec); err != nil {
		return nil, fmt.Errorf("wallets: decode: %w", err)
	}
	if err := json.Unmarshal(it.Bytes("policy"), &l.policy); err != nil {
		return nil, fmt.Errorf("wallets: decode policy: %w", err)
	}
	if err := json.Unmarshal(it.Bytes("spends"), &l.spends); err != nil {
		return nil, fmt.Errorf("wallets: decode spends: %w", err)
	}
	return l, nil
}

// Get reads a wallet of the caller's scope.
func (s *Service) Get(ctx context.Context, sc Scope, id string) (*Wallet, error) {
	l, err := s.load(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	return s.view(l), nil
}

// List lists the scope's wallets, oldest first.
func (s *Service) List(ctx context.Context, sc Scope, limit int, cursor string) ([]*Wallet, string, error) {
	return paging.List(ctx, s.st, "acct#"+sc.AccountID, sc.key("wal", "").SK, false, limit, cursor, func(it store.Item) (*Wallet, string, error) {
		l, err := decodeWallet(it)
		if err != nil {
			return nil, "", err
		}
		return s.view(l), l.rec.ID, nil
	})
}

// Address is a wallet's address, for swaps.
func (s *Service) Address(ctx context.Context, sc Scope, id string) (common.Address, error) {
	l, err := s.load(ctx, sc, id)
	if err != nil {
		return common.Address{}, err
	}
	return common.HexToAddress(l.rec.Address), nil
}

// openKey opens a wallet's sealed key to sign; the caller zeroes it.
func (s *Service) openKeyOf(ctx context.Context, l *loaded) (*ecdsa.PrivateKey, error) {
	if s.sealer == nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "Managed wallets need the envelope key, which this deployment does not have.")
	}
	raw, err := s.sealer.Open(ctx, l.item.Bytes("key"), keyAD(l.rec.AccountID, l.rec.ID, l.rec.Address))
	if err != nil {
		return nil, fmt.Errorf("wallets: open key: %w", err)
	}
	defer clear(raw)
	k, err := crypto.ToECDSA(raw)
	if err != nil {
		return nil, fmt.Errorf("wallets: key: %w", err)
	}
	if crypto.PubkeyToAddress(k.PublicKey).Hex() != l.rec.Address {
		zero(k)
		return nil, errors.New("wallets: sealed key does not match the wallet's address")
	}
	return k, nil
}

func (s *Service) network(id uint64) (*chain.Network, error) {
	n, ok := s.nets.Get(id)
	if !ok {
		return nil, apierr.New(apierr.ServiceUnavailable, "Chain %d is not configured in this deployment (configured: %v).", id, s.nets.IDs())
	}
	return n, nil
}

// ChainUnavailable turns a chain call's failure into a 503 that may be retried
// (an API error it already is passes through).
func ChainUnavailable(what string, err error) error {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	e := apierr.New(apierr.ServiceUnavailable, "The chain did not answer (%s); retry later.", what).WithHeader("Retry-After", "2")
	e.Cause = err
	return e
}

// Price is what wallets.transactions.create costs, in micro-credits.
func (s *Service) Price() int64 { return s.price }
