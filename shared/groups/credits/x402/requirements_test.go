package x402

import (
	"errors"
	"testing"
)

func TestTerms_RejectsUnpayableRequirements(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *PaymentRequirements)
	}{
		{"scheme other than exact", func(r *PaymentRequirements) { r.Scheme = "upto" }},
		{"network not eip155", func(r *PaymentRequirements) { r.Network = "solana:devnet" }},
		{"network with leading zero", func(r *PaymentRequirements) { r.Network = "eip155:084532" }},
		{"network v1 name", func(r *PaymentRequirements) { r.Network = "base-sepolia" }},
		{"asset not an address", func(r *PaymentRequirements) { r.Asset = "USDC" }},
		{"payTo short", func(r *PaymentRequirements) { r.PayTo = "0x1234" }},
		{"amount zero", func(r *PaymentRequirements) { r.Amount = "0" }},
		{"amount hex", func(r *PaymentRequirements) { r.Amount = "0x10" }},
		{"amount negative", func(r *PaymentRequirements) { r.Amount = "-5" }},
		{"amount decimal point", func(r *PaymentRequirements) { r.Amount = "5.00" }},
		{"timeout zero", func(r *PaymentRequirements) { r.MaxTimeoutSeconds = 0 }},
		{"timeout over a day", func(r *PaymentRequirements) { r.MaxTimeoutSeconds = 86401 }},
		{"domain name missing", func(r *PaymentRequirements) { r.Extra.Name = "" }},
		{"domain version missing", func(r *PaymentRequirements) { r.Extra.Version = "" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := testRequirements()
			tc.edit(&r)
			if _, err := r.Terms(); !errors.Is(err, ErrInvalidRequirements) {
				t.Fatalf("err %v, want ErrInvalidRequirements", err)
			}
		})
	}
	terms, err := testRequirements().Terms()
	if err != nil || terms.Amount.String() != "5000000" || terms.Domain.ChainID != 84532 {
		t.Fatalf("valid requirements: %+v, %v", terms, err)
	}
}

func TestUSDCFromCents(t *testing.T) {
	for cents, want := range map[int64]string{500: "5000000", 50000: "500000000", 1234: "12340000"} {
		if got := USDCFromCents(cents); got != want {
			t.Errorf("USDCFromCents(%d) = %s, want %s", cents, got, want)
		}
	}
}
