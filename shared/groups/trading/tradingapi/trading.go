// Package tradingapi is the managed-trading endpoint group:
// firm quotes, orders and positions in the book of the caller's account and
// project, on the venue the deployment configures (the paper venue by
// default). trading.orders.create is credit-metered: its hold commits with
// the order, is captured at the first fill and released when the order
// ends unfilled; creditsPerDay counts it when it is placed.
package tradingapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/adapters/outbox"
	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/trading"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
	// Trading is the venue and paper cash (see package tradingenv); its
	// Store and Now are the group's.
	Trading trading.Config
	// Outbox records each order change's event in the change's own
	// transaction; nil records none.
	Outbox outbox.Recorder
}

type handlers struct {
	k     *api.Kernel
	svc   *trading.Service
	price int64
}

const operationID = "trading.orders.create"

// Register adds the group's operations to the kernel. Orders are not
// deferred to the idempotent response's transaction (their writes depend
// on failed conditions): a lost response is covered by the order's own
// dedupe key, the Idempotency-Key.
func Register(k *api.Kernel, d Deps) error {
	cfg := d.Trading
	cfg.Store, cfg.Now, cfg.Outbox = d.Store, k.Now, d.Outbox
	svc, err := trading.New(cfg)
	if err != nil {
		return err
	}
	svcEntry, _ := catalog.Lookup("managed-trading")
	op, _ := svcEntry.Op(operationID)
	h := &handlers{k: k, svc: svc, price: op.PriceMicro}
	api.Register(k, "trading.quotes.create", http.StatusCreated, h.quote, api.Describe(quoteDoc))
	api.Register(k, "trading.orders.create", http.StatusCreated, h.order, api.Describe(orderDoc))
	api.Register(k, "trading.orders.list", http.StatusOK, h.list)
	api.Register(k, "trading.orders.read", http.StatusOK, h.read, api.Describe(readDoc))
	api.Register(k, "trading.positions.list", http.StatusOK, h.positions, api.Describe(positionsDoc))
	return nil
}

const quoteDoc = "Prices a trade at the venue's touch: the ask for a buy, the bid for a sell. On the paper venue a quote is **firm**: " +
	"an order with its `quoteId` before `expiresAt` (15 s) fills its whole quantity at exactly `price`, once; a second order " +
	"with it is `409 quote_already_used`, a late one `409 quote_expired`. Quantities and prices are decimal strings; a JSON number is refused."

const orderDoc = "Submits an order to the venue. Its life: `new` → `partially_filled` → `filled`, or `expired` " +
	"(time in force ran out; `ioc` and `fok` end at once), or `rejected` (`insufficient_buying_power`, `insufficient_position`).\n\n" +
	"Example: `{\"quoteId\":\"trq_…\"}` fills at the quote's price at once (`filled`). " +
	"`{\"symbol\":\"ETH-USD\",\"side\":\"buy\",\"type\":\"market\",\"qty\":\"500\",\"timeInForce\":\"day\"}` takes each minute's depth " +
	"(`partially_filled`, then `filled` minutes later). `{\"symbol\":\"ETH-USD\",\"side\":\"buy\",\"type\":\"limit\",\"qty\":\"0.5\",\"limitPrice\":\"2500.00\",\"timeInForce\":\"gtc\"}` " +
	"rests as `new` until the tape's ask crosses 2500.00.\n\n" +
	"Buying power is reserved at submission (qty × the limit price, or × the ask plus 5% for a market order) and returned as the order fills " +
	"or ends. Credits: the order's price is held with it, captured at its first fill (`chargedCredits`) and released if it ends unfilled; " +
	"a rejected order is not charged. The `Idempotency-Key` is also the order's dedupe key: a retry never trades twice, even after a lost response " +
	"(the replay carries `Idempotent-Replayed: true`). Events `trading.order.<status>` follow each change."

const readDoc = "Reads an order, re-checked against the venue first, so a resting order reads as of now (a scheduled worker also re-checks every minute)."

const positionsDoc = "The book's open positions at average cost, valued at the venue's mid. A position always equals the sum of its fills: " +
	"each fill is written in one transaction with its order and position."

// scope is the caller's book: its account and selected project.
func scope(ctx context.Context) (*api.Principal, trading.Scope) {
	p := api.PrincipalFrom(ctx)
	return p, trading.Scope{AccountID: p.Key().AccountID, ProjectID: p.ProjectID}
}

func (h *handlers) quote(ctx context.Context, in *api.Body[trading.QuoteRequest]) (*api.Body[*trading.Quote], error) {
	_, sc := scope(ctx)
	q, err := h.svc.CreateQuote(ctx, sc, in.Body)
	if err != nil {
		return nil, err
	}
	return api.Reply(q), nil
}

type orderInput struct {
	Body    trading.OrderRequest
	idemKey string
}

// Resolve reads the Idempotency-Key (the kernel has checked and documented
// it) to use as the order's dedupe key.
func (in *orderInput) Resolve(ctx huma.Context) []error {
	in.idemKey = ctx.Header("Idempotency-Key")
	return nil
}

type orderOutput struct {
	Location string `header:"Location" doc:"The order's URL"`
	Replayed string `header:"Idempotent-Replayed" doc:"true when a retry found the order its Idempotency-Key created"`
	Body     *trading.Order
}

func (h *handlers) order(ctx context.Context, in *orderInput) (*orderOutput, error) {
	p, sc := scope(ctx)
	// creditsPerDay counts the order when it is placed; an order that ends
	// unfilled in this request gives it back.
	release, err := h.k.CreditsPerDay(ctx, operationID, h.price)
	if err != nil {
		return nil, err
	}
	res, err := h.svc.CreateOrder(ctx, sc, trading.Submission{
		OrderRequest: in.Body,
		DedupeKey:    p.Key().ID + ":" + in.idemKey,
		CreditsMicro: h.price,
	})
	if err != nil || res.Replayed || res.Order.FilledQty == "0" && res.Order.ExpiresAt == nil {
		release()
	}
	if err != nil {
		return nil, err
	}
	out := &orderOutput{Location: "/" + api.APIVersion + "/trading/orders/" + res.Order.ID, Body: res.Order}
	if res.Replayed {
		out.Replayed = "true"
	}
	return out, nil
}

type listInput struct {
	api.ListInput
}

func (h *handlers) list(ctx context.Context, in *listInput) (*api.Body[api.Page[*trading.Order]], error) {
	_, sc := scope(ctx)
	orders, next, err := h.svc.ListOrders(ctx, sc, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(orders, next)), nil
}

type readInput struct {
	OrderID string `path:"orderId" doc:"Order id (ord_…)" example:"ord_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
}

func (h *handlers) read(ctx context.Context, in *readInput) (*api.Body[*trading.Order], error) {
	_, sc := scope(ctx)
	res, err := h.svc.GetOrder(ctx, sc, in.OrderID)
	if err != nil {
		return nil, err
	}
	return api.Reply(res.Order), nil
}

type positionList struct {
	Data []trading.Position `json:"data"`
}

func (h *handlers) positions(ctx context.Context, _ *struct{}) (*api.Body[positionList], error) {
	_, sc := scope(ctx)
	ps, err := h.svc.Positions(ctx, sc)
	if err != nil {
		return nil, err
	}
	return api.Reply(positionList{Data: ps}), nil
}
