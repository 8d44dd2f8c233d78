// Package swapsapi is the universal-swaps endpoint group (docs/swaps.md):
// quotes bound to a managed wallet or an address and used once, execution
// from managed wallets as wallet transactions under the wallet's policy,
// unsigned swaps for the caller's own wallet, and route status by
// transaction hash.
package swapsapi

import (
	"context"
	"net/http"

	"platformapi/shared/api"
	"platformapi/shared/groups/swaps"
	"platformapi/shared/groups/swaps/walletsenv"
	"platformapi/shared/groups/wallets"
)

// Deps are managed wallets and swaps wired together (walletsenv.Wire),
// the same for both groups.
type Deps = walletsenv.Services

type handlers struct {
	k   *api.Kernel
	svc *swaps.Service
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, svc: d.Swaps}
	api.Register(k, "swaps.tokens.list", http.StatusOK, h.tokens)
	api.Register(k, "swaps.quote", http.StatusCreated, h.quote, api.Describe(quoteDoc))
	api.Register(k, "swaps.execute", http.StatusAccepted, h.execute, api.Describe(executeDoc))
	api.Register(k, "swaps.list", http.StatusOK, h.list)
	api.Register(k, "swaps.read", http.StatusOK, h.read, api.Describe(readDoc))
	api.Register(k, "swaps.prepare", http.StatusOK, h.prepare, api.Describe(prepareDoc))
	api.Register(k, "swaps.routes.read", http.StatusOK, h.route, api.Describe(routeDoc))
	return nil
}

const quoteDoc = "Quotes a swap of `fromAmount` base units of `fromToken` for `toToken`, for a managed wallet (`walletId`: execute " +
	"it with POST /swaps) or for your own address (`fromAddress`: build it with POST /swaps/prepare). The quote is bound to that " +
	"sender, expires within 30 s and is used once. `toAmountMin` is what the swap guarantees or it fails (toAmount less `slippageBps`, " +
	"default 50). `approval` says whether an exact-amount token approval must come first (never an unlimited one); `issues.balance` " +
	"says when the sender holds too little. On the local chain the router is the chain's constant-product pool; in a deployment, a " +
	"LI.FI-compatible router."

const executeDoc = "Executes a wallet's quote: an exact-amount approval when the allowance is short, then the swap, as the wallet's " +
	"transactions (see them under /wallets/{walletId}/transactions). The wallet's policy decides `swaps.execute`: deny is `403 " +
	"policy_denied`; require_approval makes the swap `pending_approval` with an approval another key decides. Statuses: " +
	"`pending_approval` → `pending` → `done` (substatus completed; `toAmount` is what was received) | `failed` (substatus " +
	"slippage_exceeded when the price moved beyond toAmountMin: the swap is refused at simulation or reverts on chain, so nothing but " +
	"gas is spent; approval_rejected, expired, reverted…). Credits: swaps.execute's price is held now and captured when the swap " +
	"confirms; creditsPerDay counts it now. The same call retried returns the same swap."

const readDoc = "Reads a swap, its transactions advanced first."

const prepareDoc = "Builds the unsigned transactions of an address-bound quote for your own wallet to sign and send: an exact-amount " +
	"`approvalTransaction` first when the allowance is short, then `transaction`. No key of ours is involved and nothing is charged. " +
	"Follow it with GET /swaps/routes/{routeId}?txHash=…."

const routeDoc = "Follows a route by its sending transaction's hash. The transaction is accepted for the route only if it is exactly " +
	"the prepared one (sender, target, calldata, value, chain): anything else is `422 transaction_mismatch`. Statuses `not_found` " +
	"(no such transaction on chain yet), `pending`, `done` (`receiving.amount` is what arrived), `failed`."

func scope(ctx context.Context) (*api.Principal, wallets.Scope) {
	p := api.PrincipalFrom(ctx)
	return p, wallets.Scope{AccountID: p.Key().AccountID, ProjectID: p.ProjectID}
}

type tokensInput struct {
	ChainID uint64 `query:"chainId" required:"true" minimum:"1" doc:"The chain whose tokens to list" example:"1337"`
	api.ListInput
}

func (h *handlers) tokens(ctx context.Context, in *tokensInput) (*api.Body[api.Page[swaps.TokenView]], error) {
	ts, next, err := h.svc.Tokens(ctx, in.ChainID, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(ts, next)), nil
}

func (h *handlers) quote(ctx context.Context, in *api.Body[swaps.SwapQuoteRequest]) (*api.Body[*swaps.SwapQuote], error) {
	_, sc := scope(ctx)
	q, err := h.svc.Quote(ctx, sc, in.Body)
	if err != nil {
		return nil, err
	}
	return api.Reply(q), nil
}

type swapOutput struct {
	Location string `header:"Location" doc:"The swap's URL"`
	Replayed string `header:"Idempotent-Replayed" doc:"true when a retry found the swap its call created"`
	Body     *swaps.Swap
}

func (h *handlers) execute(ctx context.Context, in *api.Body[swaps.ExecuteRequest]) (*swapOutput, error) {
	p, sc := scope(ctx)
	release, err := h.k.CreditsPerDay(ctx, "swaps.execute", h.svc.Price())
	if err != nil {
		return nil, err
	}
	sw, replayed, err := h.svc.Execute(ctx, sc, in.Body, p.Key().ID, api.CallID(ctx))
	if err != nil || replayed {
		release()
	}
	if err != nil {
		return nil, err
	}
	out := &swapOutput{Location: "/" + api.APIVersion + "/swaps/" + sw.ID, Body: sw}
	if replayed {
		out.Replayed = "true"
	}
	return out, nil
}

func (h *handlers) list(ctx context.Context, in *api.ListInput) (*api.Body[api.Page[*swaps.Swap]], error) {
	_, sc := scope(ctx)
	ss, next, err := h.svc.List(ctx, sc, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(ss, next)), nil
}

type swapPath struct {
	SwapID string `path:"swapId" doc:"Swap id (swp_…)" example:"swp_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
}

func (h *handlers) read(ctx context.Context, in *swapPath) (*api.Body[*swaps.Swap], error) {
	_, sc := scope(ctx)
	sw, err := h.svc.Get(ctx, sc, in.SwapID)
	if err != nil {
		return nil, err
	}
	return api.Reply(sw), nil
}

type prepareRequest struct {
	QuoteID string `json:"quoteId" doc:"A fromAddress-bound quote, unexpired"`
}

func (h *handlers) prepare(ctx context.Context, in *api.Body[prepareRequest]) (*api.Body[*swaps.Prepared], error) {
	_, sc := scope(ctx)
	p, err := h.svc.Prepare(ctx, sc, in.Body.QuoteID)
	if err != nil {
		return nil, err
	}
	return api.Reply(p), nil
}

type routeInput struct {
	RouteID string `path:"routeId" doc:"Route id (rte_…)" example:"rte_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	TxHash  string `query:"txHash" doc:"The sending transaction's hash; without it, the one accepted before"`
}

func (h *handlers) route(ctx context.Context, in *routeInput) (*api.Body[*swaps.RouteStatus], error) {
	_, sc := scope(ctx)
	st, err := h.svc.FollowRoute(ctx, sc, in.RouteID, in.TxHash)
	if err != nil {
		return nil, err
	}
	return api.Reply(st), nil
}
