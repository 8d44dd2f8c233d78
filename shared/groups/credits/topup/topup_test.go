package topup_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/credits/topup"
	"platformapi/shared/groups/credits/x402"
	"platformapi/shared/groups/credits/x402/localfacilitator"
)

var config = topup.TopUpConfig{
	Network: "eip155:84532", Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
	AssetName: "USDC", AssetVersion: "2", PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", MaxTimeoutSeconds: 300,
}

// crashOnce fails the first transaction, as a process that died between
// settling a payment and crediting it would leave things.
type crashOnce struct {
	store.Store
	crashed atomic.Bool
}

func (c *crashOnce) Transact(ctx context.Context, ops []store.Op) error {
	if c.crashed.CompareAndSwap(false, true) {
		return errors.New("process died")
	}
	return c.Store.Transact(ctx, ops)
}

// A payment settled on chain but not yet credited is credited by the retry:
// the retry resumes before verifying, which would refuse its used nonce.
func TestASettledButUncreditedPaymentIsCreditedByTheRetry(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := b.Open(t, time.Now)
			if err := st.Transact(ctx, credits.OpenAccountOps("acct_1", 0, "test", time.Now())); err != nil {
				t.Fatal(err)
			}
			crashing := &crashOnce{Store: st}
			buy := topup.NewTopUp(crashing, time.Now, config, localfacilitator.New(st, localfacilitator.Config{}))
			req := topup.TopUpRequest{AmountUSD: 10}
			key, _ := crypto.GenerateKey()
			payment, err := x402.Sign(key, config.Requirements(1000), x402.SignOptions{Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := buy.Buy(ctx, "acct_1", "call_1", "https://api.test/v1/credits/x402/top-up", req, &payment); err == nil {
				t.Fatal("the first attempt should have died before crediting")
			}
			res, _, err := buy.Buy(ctx, "acct_1", "call_1", "https://api.test/v1/credits/x402/top-up", req, &payment)
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if res.CreditedCredits != 1000 || res.Balance != 1000 {
				t.Fatalf("retry credited %+v, want 1000 credits once", res)
			}
			var pe *topup.PaymentError
			if _, _, err := buy.Buy(ctx, "acct_1", "call_2", "https://api.test/v1/credits/x402/top-up", req, &payment); !errors.As(err, &pe) {
				t.Fatalf("third use: %v, want the payment refused as used", err)
			}
		})
	}
}

// diesAfterCredit fails the first write of a top-up's result, as a
// process that died right after the credit committed would leave things.
type diesAfterCredit struct {
	store.Store
	died atomic.Bool
}

func (d *diesAfterCredit) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	if _, ok := u.Set["result"]; ok && d.died.CompareAndSwap(false, true) {
		return nil, errors.New("process died")
	}
	return d.Store.Update(ctx, k, u, conds...)
}

// A retry of the call that credited a payment, whose process died after
// the credit and before its answer, answers that top-up again rather than
// refusing the payment as used: the caller learns it bought the credits,
// and the call's answer and its credits.topped_up event are made at last.
// The answer is the first attempt's, whatever moved the balance since, so
// that an event the first attempt recorded is not recorded again under
// another id. The payment credits once, and any other call using it is
// refused.
func TestARetryOfTheCallThatCreditedAPaymentAnswersItsTopUpAgain(t *testing.T) {
	for _, b := range teststores.All() {
		for _, tc := range []struct {
			name string
			// diesBeforeResult: the first attempt dies before it records
			// its result, else right after it.
			diesBeforeResult bool
		}{{"dead after its result was recorded", false}, {"dead before its result was recorded", true}} {
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				st := b.Open(t, time.Now)
				if err := st.Transact(ctx, credits.OpenAccountOps("acct_1", 0, "test", time.Now())); err != nil {
					t.Fatal(err)
				}
				var used store.Store = st
				if tc.diesBeforeResult {
					used = &diesAfterCredit{Store: st}
				}
				buy := topup.NewTopUp(used, time.Now, config, localfacilitator.New(st, localfacilitator.Config{}))
				const url = "https://api.test/v1/credits/x402/top-up"
				req := topup.TopUpRequest{AmountUSD: 10}
				pay := func() x402.PaymentPayload {
					key, _ := crypto.GenerateKey()
					p, err := x402.Sign(key, config.Requirements(1000), x402.SignOptions{Now: time.Now()})
					if err != nil {
						t.Fatal(err)
					}
					return p
				}
				payment := pay()
				first, _, err := buy.Buy(ctx, "acct_1", "call_1", url, req, &payment)
				if tc.diesBeforeResult != (err != nil) {
					t.Fatalf("first attempt: %+v %v", first, err)
				}
				// Another top-up moves the balance before the retry.
				other := pay()
				if _, _, err := buy.Buy(ctx, "acct_1", "call_2", url, req, &other); err != nil {
					t.Fatal(err)
				}
				retry, settled, err := buy.Buy(ctx, "acct_1", "call_1", url, req, &payment)
				if err != nil || settled == nil || !settled.Success {
					t.Fatalf("retry: %+v %+v %v, want the top-up answered again", retry, settled, err)
				}
				if again, _, err := buy.Buy(ctx, "acct_1", "call_1", url, req, &payment); err != nil || *again != *retry {
					t.Fatalf("second retry: %+v %v, want %+v", again, err, retry)
				}
				if !tc.diesBeforeResult && *retry != *first {
					t.Fatalf("retry answered %+v, want the first attempt's %+v", retry, first)
				}
				if bal, err := credits.NewLedger(st, time.Now).Balance(ctx, "acct_1"); err != nil || bal != 2000*1_000_000 {
					t.Fatalf("balance %d (%v), want 2000 credits: each payment credited once", bal, err)
				}
				var pe *topup.PaymentError
				if _, _, err := buy.Buy(ctx, "acct_1", "call_3", url, req, &payment); !errors.As(err, &pe) {
					t.Fatalf("another call: %v, want the payment refused as used", err)
				}
			})
		}
	}
}

// lostAnswer settles (or not) on "chain" but loses the answer.
type lostAnswer struct {
	x402.Facilitator
	settle bool
}

func (l lostAnswer) Settle(ctx context.Context, p x402.PaymentPayload, req x402.PaymentRequirements) (x402.SettleResponse, error) {
	if l.settle {
		if _, err := l.Facilitator.Settle(ctx, p, req); err != nil {
			return x402.SettleResponse{}, err
		}
	}
	return x402.SettleResponse{}, errors.New("facilitator: timeout")
}

// chain answers authorizationState from what the facilitator settled.
type chain struct{ used bool }

func (c chain) AuthorizationUsed(context.Context, string, string, string) (bool, error) {
	return c.used, nil
}

// A settlement whose answer was lost is reconciled with the chain once its
// grace has passed: credited exactly once when the transfer happened, and
// settled afresh when it did not.
func TestALostSettlementIsReconciledWithTheChain(t *testing.T) {
	for _, b := range teststores.All() {
		for _, tc := range []struct {
			name    string
			onChain bool
		}{{"the transfer happened", true}, {"the transfer never happened", false}} {
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				now := time.Now()
				clock := func() time.Time { return now }
				st := b.Open(t, clock)
				if err := st.Transact(ctx, credits.OpenAccountOps("acct_1", 0, "test", now)); err != nil {
					t.Fatal(err)
				}
				local := localfacilitator.New(st, localfacilitator.Config{Now: clock})
				buy := topup.NewTopUp(st, clock, config, lostAnswer{Facilitator: local, settle: tc.onChain}).WithChain(chain{used: tc.onChain})
				req := topup.TopUpRequest{AmountUSD: 10}
				key, _ := crypto.GenerateKey()
				payment, err := x402.Sign(key, config.Requirements(1000), x402.SignOptions{Now: now})
				if err != nil {
					t.Fatal(err)
				}
				const url = "https://api.test/v1/credits/x402/top-up"
				if _, _, err := buy.Buy(ctx, "acct_1", "call_1", url, req, &payment); !isUnavailable(err) {
					t.Fatalf("got %v, want 503: the outcome is unknown", err)
				}
				var pe *topup.PaymentError
				if _, _, err := buy.Buy(ctx, "acct_1", "call_1", url, req, &payment); !errors.As(err, &pe) {
					t.Fatalf("within the grace: %v, want the payment refused while it settles", err)
				}
				now = now.Add(3 * time.Minute)
				res, _, err := buy.Buy(ctx, "acct_1", "call_1", url, req, &payment)
				if tc.onChain {
					if err != nil || res.CreditedCredits != 1000 || res.Balance != 1000 {
						t.Fatalf("reconciled: %+v %v, want 1000 credits", res, err)
					}
					if _, _, err := buy.Buy(ctx, "acct_1", "call_2", url, req, &payment); !errors.As(err, &pe) {
						t.Fatalf("after crediting: %v, want the payment refused as used", err)
					}
					return
				}
				if !isUnavailable(err) {
					t.Fatalf("unsettled: %v, want 503 and the attempt forgotten", err)
				}
				settles := topup.NewTopUp(st, clock, config, local).WithChain(chain{})
				if res, _, err := settles.Buy(ctx, "acct_1", "call_1", url, req, &payment); err != nil || res.Balance != 1000 {
					t.Fatalf("settled afresh: %+v %v", res, err)
				}
			})
		}
	}
}

func isUnavailable(err error) bool {
	var ae *apierr.Error
	return errors.As(err, &ae) && ae.Code == apierr.ServiceUnavailable
}
