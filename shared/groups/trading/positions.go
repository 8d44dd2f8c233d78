package trading

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/decimal"
	"platformapi/shared/domain/paging"
)

// Positions lists the book's open positions (qty > 0), valued at the
// venue's current mid. Another book's positions are simply absent.
func (s *Service) Positions(ctx context.Context, sc Scope) ([]Position, error) {
	now := s.now()
	out := []Position{}
	after := ""
	for {
		page, err := s.st.Query(ctx, store.Query{PK: "acct#" + sc.AccountID, Prefix: sc.prefix() + "pos#", After: after, Limit: 100})
		if err != nil {
			return nil, fmt.Errorf("trading: list positions: %w", err)
		}
		for _, it := range page.Items {
			after = it.Key().SK
			p := decodePosition(it)
			if p.Qty == 0 {
				continue
			}
			symbol := strings.TrimPrefix(after, sc.prefix()+"pos#")
			top, err := s.venue.Top(ctx, symbol, now)
			if err != nil {
				return nil, fmt.Errorf("trading: price %s: %w", symbol, err)
			}
			value := new(big.Int).Mul(big.NewInt(p.Qty), big.NewInt(top.Mid))
			out = append(out, Position{Symbol: symbol, Qty: decimal.Format(p.Qty, QtyPlaces), AvgEntryPrice: avgPrice(p.Cost, p.Qty),
				CostBasis: decimal.Format(p.Cost, MoneyPlaces), MarketValue: decimal.FormatBig(value, MoneyPlaces),
				CurrentPrice: decimal.Format(top.Mid, PricePlaces),
				UnrealizedPl: decimal.FormatBig(value.Sub(value, big.NewInt(p.Cost)), MoneyPlaces),
				RealizedPl:   decimal.Format(p.Realized, MoneyPlaces)})
		}
		if !page.More {
			return out, nil
		}
	}
}

// BuyingPower is the book's cash not spent or reserved by open buys, a
// decimal string of dollars.
func (s *Service) BuyingPower(ctx context.Context, sc Scope) (string, error) {
	it, err := s.st.Get(ctx, sc.key("cash"))
	var debit int64
	switch {
	case err == nil:
		debit = it.Int("debit")
	case !errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("trading: read cash: %w", err)
	}
	return decimal.Format(s.cash-debit, MoneyPlaces), nil
}

// ListOrders pages through the book's orders, newest first, without
// re-checking them (GetOrder does).
func (s *Service) ListOrders(ctx context.Context, sc Scope, limit int, cursor string) ([]*Order, string, error) {
	if limit < 1 || limit > 100 {
		return nil, "", apierr.Invalid("Invalid limit.", apierr.Field("query.limit", "between 1 and 100"))
	}
	after, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	if after != "" && !strings.HasPrefix(after, sc.prefix()+"ord#") {
		return nil, "", apierr.Invalid("Invalid cursor.", apierr.Field("query.cursor", "not a cursor from this list"))
	}
	page, err := s.st.Query(ctx, store.Query{PK: "acct#" + sc.AccountID, Prefix: sc.prefix() + "ord#", After: after, Limit: limit, Reverse: true})
	if err != nil {
		return nil, "", fmt.Errorf("trading: list orders: %w", err)
	}
	out := make([]*Order, 0, len(page.Items))
	for _, it := range page.Items {
		o, _, err := decodeOrder(it)
		if err != nil {
			return nil, "", err
		}
		out = append(out, o.view())
	}
	next := ""
	if page.More && len(page.Items) > 0 {
		next = paging.Cursor(page.Items[len(page.Items)-1].Key().SK)
	}
	return out, next, nil
}
