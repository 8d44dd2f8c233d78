package tradingenv_test

import (
	"testing"

	"platformapi/shared/groups/trading/tradingenv"
)

func TestTheVenueComesFromTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		venue string
		fails bool
	}{
		{"paper by default", map[string]string{}, "paper", false},
		{"paper named", map[string]string{"TRADING_VENUE": "paper", "TRADING_PAPER_SEED": "s"}, "paper", false},
		{"alpaca with credentials", map[string]string{"TRADING_VENUE": "alpaca", "ALPACA_KEY_ID": "k", "ALPACA_SECRET_KEY": "s"}, "alpaca", false},
		{"alpaca without credentials", map[string]string{"TRADING_VENUE": "alpaca"}, "", true},
		{"an unknown venue", map[string]string{"TRADING_VENUE": "nyse"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tradingenv.Config(func(k string) string { return tc.env[k] })
			if tc.fails {
				if err == nil {
					t.Fatal("configuration accepted")
				}
				return
			}
			if err != nil || cfg.Venue.Name() != tc.venue {
				t.Fatalf("venue %v, err %v", cfg.Venue, err)
			}
		})
	}
}
