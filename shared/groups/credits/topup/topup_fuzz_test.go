package topup_test

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"

	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/credits/topup"
	"platformapi/shared/groups/credits/x402"
)

func TestTopUpAmountsAreWholeCentsFrom5To500Dollars(t *testing.T) {
	for _, tc := range []struct {
		usd   float64
		cents int64
		ok    bool
	}{
		{5, 500, true}, {500, 50000, true}, {19.99, 1999, true}, {0.1 + 0.2 + 9.7, 1000, true},
		{4.99, 0, false}, {500.01, 0, false}, {10.001, 0, false}, {-5, 0, false},
		{math.NaN(), 0, false}, {math.Inf(1), 0, false}, {math.Inf(-1), 0, false},
	} {
		cents, err := topup.TopUpRequest{AmountUSD: tc.usd}.Cents()
		var e *apierr.Error
		if tc.ok != (err == nil) || cents != tc.cents || err != nil && (!errors.As(err, &e) || e.Code != apierr.ValidationFailed) {
			t.Errorf("Cents(%v) = %d, %v; want %d ok=%v", tc.usd, cents, err, tc.cents, tc.ok)
		}
	}
}

// FuzzTopUpAmount: an amount as a client writes it in JSON is either a
// validation error or a whole number of cents in range whose USDC amount is
// exactly cents × 10^4 atomic units.
func FuzzTopUpAmount(f *testing.F) {
	for _, s := range []string{"5", "500", "19.99", "10.001", "1e2", "4.999999999", "5.0000000001", "-0", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, amount string) {
		var req topup.TopUpRequest
		if json.Unmarshal([]byte(`{"amountUsd":`+amount+`}`), &req) != nil {
			return
		}
		cents, err := req.Cents()
		if err != nil {
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.ValidationFailed {
				t.Fatalf("Cents(%s) = %v", amount, err)
			}
			return
		}
		if cents < 500 || cents > 50000 || math.Abs(float64(cents)/100-req.AmountUSD) > 1e-6 {
			t.Fatalf("Cents(%s) = %d", amount, cents)
		}
		if got := x402.USDCFromCents(cents); got != strconv.FormatInt(cents*10_000, 10) {
			t.Fatalf("USDCFromCents(%d) = %s", cents, got)
		}
	})
}
