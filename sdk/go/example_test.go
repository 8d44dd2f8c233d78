package platform_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	"platformapi/sdk/go"
	"platformapi/shared/keys"
	"platformapi/shared/limits"
	"platformapi/shared/projects"
	"platformapi/shared/swaps"
	"platformapi/shared/wallets"
	"platformapi/shared/x402"
)

// The first requests of the README, with the SDK (compiled, not run: it
// needs a server; sdk_test.go runs the same calls against one).
func Example() {
	ctx := context.Background()
	c := platform.New(platform.Options{BaseURL: "http://127.0.0.1:8080",
		OnDeprecation: func(op, dep, sunset, link string) {
			log.Printf("%s is deprecated (%s), sunset %s, see %s", op, dep, sunset, link)
		}})

	// Redeem a first-key credit token: a new account and its root key.
	first, err := c.CreateAPIKey(ctx, keys.CreateKeyRequest{Label: "root"}, platform.WithCreditToken(os.Getenv("TOKEN")))
	if err != nil { // transport failure after the retries
		log.Fatal(err)
	}
	if !first.OK { // an API failure: status, code, detail, field errors, request id
		log.Fatalf("%s (%s, request %s)", first.Error.Detail, first.Error.Code, first.Error.RequestID)
	}
	root := c.WithAPIKey(first.Value.Secret)

	bal, _ := root.Balance(ctx)
	fmt.Println(bal.Value.Balance, bal.Value.Unit) // 50 credits

	// A narrower child key: only memory search, 60 requests a minute.
	perMinute := int64(60)
	child, _ := root.CreateAPIKey(ctx, keys.CreateKeyRequest{Label: "search-worker", Scopes: []string{"services:invoke"},
		AllowedServices: []string{"cloud-superbrain"}, AllowedOperations: []string{"services.invoke.cloud-superbrain.memory.search"},
		Limits: limits.Set{"*": {RequestsPerMinute: &perMinute}}})
	fmt.Println(child.Value.ID)

	// Call a managed service; the Idempotency-Key is generated and reused on retries.
	input, _ := json.Marshal(map[string]string{"text": "the deploy key rotates every 90 days"})
	inv, _ := root.Invoke(ctx, "cloud-superbrain", platform.InvokeRequest{OperationID: "memory.write", Input: input})
	fmt.Println(inv.Value.ChargedCredits, string(inv.Value.Result))

	// Projects, and every page of the list.
	p, _ := root.CreateProject(ctx, projects.CreateProjectRequest{Name: "shop"})
	for pr, err := range root.AllProjects(ctx, platform.ListOptions{Limit: 50}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pr.ID, pr.Name)
	}

	// Buy credits with x402: the SDK asks, signs the challenge with your
	// signer and pays under the same Idempotency-Key.
	var payer *ecdsa.PrivateKey // your wallet's key (development: crypto.GenerateKey)
	top, _ := root.TopUp(ctx, "10.00", func(_ context.Context, req x402.PaymentRequirements) (x402.PaymentPayload, error) {
		return x402.Sign(payer, req, x402.SignOptions{})
	})
	fmt.Println(top.Value.CreditedCredits, top.Value.ReceiptID)

	// Upload a file to the project, and stream it back.
	f, _ := root.UploadFile(ctx, platform.Upload{Name: "notes.txt", ContentType: "text/plain", Body: os.Stdin}, platform.WithProject(p.Value.ID))
	dl, _ := root.DownloadFile(ctx, f.Value.ID, platform.WithProject(p.Value.ID))
	if dl.OK {
		defer dl.Value.Body.Close()
		fmt.Println(dl.Value.SHA256)
	}
}

// A managed wallet signs a message once another key approved it, then swaps
// USDC for WETH (compiled, not run; wallets_test.go runs the same calls
// against a server on the local chain).
func Example_wallet() {
	ctx := context.Background()
	root := platform.New(platform.Options{BaseURL: "http://127.0.0.1:8080", APIKey: os.Getenv("ROOT_KEY")})
	approver := root.WithAPIKey(os.Getenv("APPROVER_KEY")) // another key with approvals:write

	w, err := root.CreateWallet(ctx, wallets.WalletCreateRequest{})
	if err != nil || !w.OK {
		log.Fatal(err, w.Error)
	}
	msg := "sign in to example.org, nonce 42"
	q, _ := root.QuoteSignature(ctx, w.Value.ID, wallets.SigQuoteRequest{Type: "personal_sign", Message: &msg})
	if q.Value.ApprovalID != nil { // the default policy: signatures need approval
		approver.DecideApproval(ctx, *q.Value.ApprovalID, platform.ApprovalDecision{Decision: "approve"})
	}
	sig, _ := root.CreateSignature(ctx, w.Value.ID, wallets.SigCreateRequest{QuoteID: q.Value.ID, ApprovalID: q.Value.ApprovalID})
	fmt.Println(sig.Value.Signature, sig.Value.Address)

	sq, _ := root.QuoteSwap(ctx, swaps.SwapQuoteRequest{WalletID: &w.Value.ID, FromChainID: 1337, ToChainID: 1337,
		FromToken: "USDC", ToToken: "WETH", FromAmount: "2500000"})
	sw, _ := root.ExecuteSwap(ctx, swaps.ExecuteRequest{QuoteID: sq.Value.ID})
	for sw.OK && (sw.Value.Status == "pending" || sw.Value.Status == "pending_approval") {
		time.Sleep(time.Second)
		sw, _ = root.GetSwap(ctx, sw.Value.ID)
	}
	fmt.Println(sw.Value.Status, sw.Value.ToAmount)
}
