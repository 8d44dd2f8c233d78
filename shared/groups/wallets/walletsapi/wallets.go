// Package walletsapi is the managed-wallets endpoint group
// (docs/wallets.md): wallets whose keys never leave the service, their
// policy, quoted sends driven to the chain by a worker, and quoted
// EIP-191/EIP-712 signatures. Every wallet belongs to the caller's account
// and project; another's is 404 on every route.
package walletsapi

import (
	"context"
	"net/http"

	"platformapi/shared/api"
	"platformapi/shared/groups/swaps/walletsenv"
	"platformapi/shared/groups/wallets"
)

// Deps are managed wallets and swaps wired together (walletsenv.Wire),
// the same for both groups.
type Deps = walletsenv.Services

type handlers struct {
	k   *api.Kernel
	svc *wallets.Service
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, svc: d.Wallets}
	api.Register(k, "wallets.create", http.StatusCreated, h.create, api.Describe(createDoc))
	api.Register(k, "wallets.list", http.StatusOK, h.list)
	api.Register(k, "wallets.read", http.StatusOK, h.read)
	api.Register(k, "wallets.balances.read", http.StatusOK, h.balances, api.Describe(balancesDoc))
	api.Register(k, "wallets.policy.update", http.StatusOK, h.policy, api.Describe(policyDoc))
	api.Register(k, "wallets.transactions.quote", http.StatusCreated, h.quote, api.Describe(quoteDoc))
	api.Register(k, "wallets.transactions.create", http.StatusAccepted, h.send, api.Describe(sendDoc))
	api.Register(k, "wallets.transactions.list", http.StatusOK, h.transactions)
	api.Register(k, "wallets.transactions.read", http.StatusOK, h.transaction, api.Describe(readDoc))
	api.Register(k, "wallets.signatures.quote", http.StatusCreated, h.sigQuote, api.Describe(sigQuoteDoc))
	api.Register(k, "wallets.signatures.create", http.StatusCreated, h.sign, api.Describe(signDoc))
	return nil
}

const createDoc = "Creates a wallet: a secp256k1 key generated here, sealed by the deployment's envelope key (KMS) with its account, " +
	"wallet and address bound in, and opened only to sign. No response, log, event or replay ever holds it. The same address " +
	"serves every chain in `chainIds`. A new wallet's policy allows transactions and swaps and requires approval for signatures."

const balancesDoc = "The wallet's balance of the chain's native coin and known tokens (USDC, WETH), in base units as decimal strings, " +
	"all of one chain read at the same block (`blockNumber`). `?chainId=` reads one chain."

const policyDoc = "Replaces the wallet's policy whole, over the revision you read (`expectedRevision`; another is `409 policy_revision_conflict`). " +
	"Needs the `approvals:write` scope. A rule applies when its operation matches and all its criteria match; among the rules that " +
	"apply, deny wins over require_approval, which wins over allow; when none applies, `defaultAction` decides. Criteria: " +
	"`recipient` and `contract` (`in` / `not_in` a list of addresses; a token transfer's recipient is decoded from its calldata), " +
	"`value` (`asset`, `op` lte|lt|gte|gt|eq, `amount` in base units), `rollingTotal` (`asset`, `windowSeconds` 60–2592000, `max`: matches " +
	"when this send would take the window's total of that asset above max; a `deny` rule with it is a spend cap, exact under " +
	"concurrency because the reservation is written with the send), `signatureType` (`in` / `not_in` personal_sign, eip712)."

const quoteDoc = "Prices a send of `amount` base units of `asset` to `to`: the transaction as it will be signed, its network fee " +
	"(at most gasLimit × maxFeePerGas), a simulation at the latest block with the revert reason if it would fail (including too little " +
	"ETH for value plus fee), and the policy's decision as of now. Execute it with `POST /wallets/{walletId}/transactions` within 60 s, once."

const sendDoc = "Executes a quote. The policy decides again: `deny` is `403 policy_denied` and creates nothing; `require_approval` " +
	"creates the transaction in `pending_approval` with an approval (`approvalId`, service managed-wallets, operation " +
	"wallets.transactions.create) that a **different** key must approve; then it moves on by itself. States: `pending_approval` → " +
	"`queued` → `submitted` → `confirmed` | `failed` (`failure.code`: simulation_failed, reverted, broadcast_rejected), or `rejected` " +
	"(the approval was) / `expired`. The wallet's sends get consecutive nonces by a conditional write; a transaction is signed once, " +
	"recorded with its nonce before it is broadcast and only ever rebroadcast. Credits: the price is held now, captured when the " +
	"transaction confirms and released otherwise; creditsPerDay counts it now. A quote is used once (`409 quote_already_used`) and " +
	"before it expires (`409 quote_expired`); the same call retried (same key and Idempotency-Key) returns the same transaction."

const readDoc = "Reads a transaction, advanced first: a decided approval or a mined receipt shows at once (a worker also advances it)."

const sigQuoteDoc = "Computes the digest of an EIP-191 `personal_sign` message or of EIP-712 typed data (no raw-hash signing) and " +
	"the policy's decision. When the policy requires approval (the default for signatures), the approval is requested now " +
	"(`approvalId`) and the quote lives as long as the approval."

const signDoc = "Signs a quote's digest with the wallet's key: `signature` is 0x r‖s‖v with v 27/28, and recovers to `address`. " +
	"Needs the quote's approval approved by another key when the policy requires one (`403 approval_required` otherwise). A quote is " +
	"signed once; the same call retried returns the same signature."

func scope(ctx context.Context) (*api.Principal, wallets.Scope) {
	p := api.PrincipalFrom(ctx)
	return p, wallets.Scope{AccountID: p.Key().AccountID, ProjectID: p.ProjectID}
}

type WalletPath struct {
	WalletID string `path:"walletId" doc:"Wallet id (wal_…)" example:"wal_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
}

type walletOutput struct {
	Location string `header:"Location"`
	Body     *wallets.Wallet
}

func (h *handlers) create(ctx context.Context, in *api.Body[wallets.WalletCreateRequest]) (*walletOutput, error) {
	_, sc := scope(ctx)
	w, err := h.svc.Create(ctx, sc, in.Body)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, "wallet.created", w)
	return &walletOutput{Location: "/" + api.APIVersion + "/wallets/" + w.ID, Body: w}, nil
}

func (h *handlers) list(ctx context.Context, in *api.ListInput) (*api.Body[api.Page[*wallets.Wallet]], error) {
	_, sc := scope(ctx)
	ws, next, err := h.svc.List(ctx, sc, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(ws, next)), nil
}

func (h *handlers) read(ctx context.Context, in *WalletPath) (*api.Body[*wallets.Wallet], error) {
	_, sc := scope(ctx)
	w, err := h.svc.Get(ctx, sc, in.WalletID)
	if err != nil {
		return nil, err
	}
	return api.Reply(w), nil
}

type balancesInput struct {
	WalletPath
	ChainID uint64 `query:"chainId" doc:"Only this chain"`
}

func (h *handlers) balances(ctx context.Context, in *balancesInput) (*api.Body[*wallets.WalletBalances], error) {
	_, sc := scope(ctx)
	b, err := h.svc.Balances(ctx, sc, in.WalletID, in.ChainID)
	if err != nil {
		return nil, err
	}
	return api.Reply(b), nil
}

type policyInput struct {
	WalletPath
	Body wallets.WalletPolicyRequest
}

func (h *handlers) policy(ctx context.Context, in *policyInput) (*api.Body[*wallets.Wallet], error) {
	_, sc := scope(ctx)
	w, err := h.svc.UpdatePolicy(ctx, sc, in.WalletID, in.Body)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, "wallet.policy_updated", w)
	return api.Reply(w), nil
}

type quoteInput struct {
	WalletPath
	Body wallets.TxQuoteRequest
}

func (h *handlers) quote(ctx context.Context, in *quoteInput) (*api.Body[*wallets.TxQuote], error) {
	_, sc := scope(ctx)
	q, err := h.svc.QuoteTransaction(ctx, sc, in.WalletID, in.Body)
	if err != nil {
		return nil, err
	}
	return api.Reply(q), nil
}

type sendInput struct {
	WalletPath
	Body wallets.TxCreateRequest
}

type txOutput struct {
	Location string `header:"Location" doc:"The transaction's URL"`
	Replayed string `header:"Idempotent-Replayed" doc:"true when a retry found the transaction its call created"`
	Body     *wallets.WalletTransaction
}

func (h *handlers) send(ctx context.Context, in *sendInput) (*txOutput, error) {
	p, sc := scope(ctx)
	release, err := h.k.CreditsPerDay(ctx, wallets.OpTransactionsCreate, h.svc.Price())
	if err != nil {
		return nil, err
	}
	t, replayed, err := h.svc.CreateTransaction(ctx, sc, in.WalletID, in.Body, p.Key().ID, api.CallID(ctx))
	if err != nil || replayed {
		release()
	}
	if err != nil {
		return nil, err
	}
	out := &txOutput{Location: "/" + api.APIVersion + "/wallets/" + in.WalletID + "/transactions/" + t.ID, Body: t}
	if replayed {
		out.Replayed = "true"
	}
	return out, nil
}

func (h *handlers) transactions(ctx context.Context, in *struct {
	WalletPath
	api.ListInput
}) (*api.Body[api.Page[*wallets.WalletTransaction]], error) {
	_, sc := scope(ctx)
	ts, next, err := h.svc.ListTransactions(ctx, sc, in.WalletID, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(ts, next)), nil
}

type txPath struct {
	WalletPath
	TransactionID string `path:"transactionId" doc:"Transaction id (wtx_…)" example:"wtx_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
}

func (h *handlers) transaction(ctx context.Context, in *txPath) (*api.Body[*wallets.WalletTransaction], error) {
	_, sc := scope(ctx)
	t, err := h.svc.GetTransaction(ctx, sc, in.WalletID, in.TransactionID)
	if err != nil {
		return nil, err
	}
	return api.Reply(t), nil
}

type sigQuoteInput struct {
	WalletPath
	Body wallets.SigQuoteRequest
}

func (h *handlers) sigQuote(ctx context.Context, in *sigQuoteInput) (*api.Body[*wallets.SigQuote], error) {
	p, sc := scope(ctx)
	q, err := h.svc.QuoteSignature(ctx, sc, in.WalletID, in.Body, p.Key().ID)
	if err != nil {
		return nil, err
	}
	return api.Reply(q), nil
}

type signInput struct {
	WalletPath
	Body wallets.SigCreateRequest
}

func (h *handlers) sign(ctx context.Context, in *signInput) (*api.Body[*wallets.WalletSignature], error) {
	_, sc := scope(ctx)
	s, err := h.svc.CreateSignature(ctx, sc, in.WalletID, in.Body, api.CallID(ctx))
	if err != nil {
		return nil, err
	}
	return api.Reply(s), nil
}
