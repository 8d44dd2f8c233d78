// Package tradingenv reads the managed-trading venue from the environment,
// for every process that trades: the local server, the trading Lambda and
// the recheck Lambda must agree on the venue, or an order placed by one
// would be executed on another's prices.
//
//	TRADING_VENUE       paper (default) or alpaca
//	TRADING_PAPER_CASH  each book's starting paper cash, dollars (default trading.DefaultPaperCash)
//	TRADING_PAPER_SEED  the paper tape's seed (default trading.DefaultSeed)
//	ALPACA_BASE_URL     alpaca: the trading API (default https://paper-api.alpaca.markets)
//	ALPACA_DATA_URL     alpaca: market data (default https://data.alpaca.markets)
//	ALPACA_KEY_ID       alpaca: the key id (required)
//	ALPACA_SECRET_KEY   alpaca: the secret (required; never logged)
package tradingenv

import (
	"errors"
	"fmt"

	"platformapi/shared/groups/trading"
	"platformapi/shared/groups/trading/alpaca"
)

// Config is the venue part of a trading.Config; the caller adds the store,
// clock and logger.
func Config(getenv func(string) string) (trading.Config, error) {
	cfg := trading.Config{PaperCash: getenv("TRADING_PAPER_CASH")}
	switch v := getenv("TRADING_VENUE"); v {
	case "", "paper":
		seed := getenv("TRADING_PAPER_SEED")
		if seed == "" {
			seed = trading.DefaultSeed
		}
		cfg.Venue = &trading.Paper{Tape: trading.NewTape([]byte(seed), trading.DefaultSymbols)}
	case "alpaca":
		a := alpaca.Config{BaseURL: getenv("ALPACA_BASE_URL"), DataURL: getenv("ALPACA_DATA_URL"), KeyID: getenv("ALPACA_KEY_ID"), Secret: getenv("ALPACA_SECRET_KEY")}
		if a.BaseURL == "" {
			a.BaseURL = "https://paper-api.alpaca.markets"
		}
		if a.DataURL == "" {
			a.DataURL = "https://data.alpaca.markets"
		}
		if a.KeyID == "" || a.Secret == "" {
			return cfg, errors.New("tradingenv: TRADING_VENUE=alpaca needs ALPACA_KEY_ID and ALPACA_SECRET_KEY")
		}
		cfg.Venue = alpaca.New(a)
	default:
		return cfg, fmt.Errorf("tradingenv: unknown TRADING_VENUE %q (paper or alpaca)", v)
	}
	return cfg, nil
}
