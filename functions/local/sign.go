package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/groups/credits/x402"
)

// signPayment is the client side of an x402 top-up for the README's walk-
// through: it signs the challenge's requirements with a payer key and prints
// the Payment-Signature header value. Development use: the key is read from
// PAYER_PRIVATE_KEY (hex), never from the command line, so it stays out of
// shell history.
func signPayment(args []string) error {
	fs := flag.NewFlagSet("sign-payment", flag.ContinueOnError)
	challenge := fs.String("payment-required", "", "the Payment-Required header of the 402 challenge (base64)")
	newKey := fs.Bool("new-key", false, "print a fresh payer private key (hex) and its address, then exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *newKey {
		k, err := crypto.GenerateKey()
		if err != nil {
			return err
		}
		fmt.Printf("%x %s\n", crypto.FromECDSA(k), crypto.PubkeyToAddress(k.PublicKey).Hex())
		return nil
	}
	hexKey := strings.TrimPrefix(os.Getenv("PAYER_PRIVATE_KEY"), "0x")
	if hexKey == "" || *challenge == "" {
		return errors.New("set PAYER_PRIVATE_KEY and pass --payment-required")
	}
	key, err := crypto.HexToECDSA(hexKey)
	if err != nil {
		return fmt.Errorf("PAYER_PRIVATE_KEY: %w", err)
	}
	pr, err := x402.DecodePaymentRequired(*challenge)
	if err != nil {
		return err
	}
	if len(pr.Accepts) == 0 {
		return errors.New("the challenge accepts no payment")
	}
	p, err := x402.Sign(key, pr.Accepts[0], x402.SignOptions{Resource: &pr.Resource})
	if err != nil {
		return err
	}
	hdr, err := x402.EncodeHeader(p)
	if err != nil {
		return err
	}
	fmt.Println(hdr)
	return nil
}
