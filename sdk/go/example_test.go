package platform_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	platform "github.com/platformapi/platformapi/sdk/go"
)

// Buying credits with x402 needs a Signer of EIP-3009 authorizations: the
// SDK has no Ethereum code. The sdktest module's Example_goEthereumSigner
// is one written with go-ethereum (compiled, not run: it needs a server).
func ExampleClient_TopUp() {
	ctx := context.Background()
	root := platform.New(platform.Options{BaseURL: "http://127.0.0.1:8080", APIKey: os.Getenv("ROOT_KEY")})
	var wallet platform.Signer // your wallet, KMS key or go-ethereum signer
	top, err := root.TopUp(ctx, "10.00", wallet)
	if err != nil || !top.OK {
		log.Fatal(err, top.Error)
	}
	fmt.Println(top.Value.CreditedCredits, top.Value.ReceiptID, top.Value.Settlement.Transaction)
}

// Upload a file to a project and stream it back (compiled, not run).
func ExampleClient_UploadFile() {
	ctx := context.Background()
	root := platform.New(platform.Options{BaseURL: "http://127.0.0.1:8080", APIKey: os.Getenv("ROOT_KEY")})
	p, _ := root.CreateProject(ctx, platform.CreateProjectRequest{Name: "docs"})
	f, _ := root.UploadFile(ctx, platform.Upload{Name: "notes.txt", ContentType: "text/plain", Body: os.Stdin}, platform.WithProject(p.Value.ID))
	dl, _ := root.DownloadFile(ctx, f.Value.ID, platform.WithProject(p.Value.ID))
	if dl.OK {
		defer dl.Value.Body.Close()
		fmt.Println(dl.Value.SHA256)
	}
}

// A managed wallet signs a message once a key outside the requester's
// lineage approved it, then swaps USDC for WETH (compiled, not run; the
// sdktest module runs the same calls against a server on the local chain).
// The agent asks and the approver decides: two keys minted by the root side
// by side, since no key of the requester's lineage (itself, its rolls, its
// ancestors, its descendants) may decide.
func Example_wallet() {
	ctx := context.Background()
	root := platform.New(platform.Options{BaseURL: "http://127.0.0.1:8080", APIKey: os.Getenv("ROOT_KEY")})
	agent := root.WithAPIKey(os.Getenv("AGENT_KEY"))       // a child of the root
	approver := root.WithAPIKey(os.Getenv("APPROVER_KEY")) // another child of the root, with approvals:write

	w, err := agent.CreateWallet(ctx, platform.WalletCreateRequest{})
	if err != nil || !w.OK {
		log.Fatal(err, w.Error)
	}
	msg := "sign in to example.org, nonce 42"
	q, _ := agent.QuoteSignature(ctx, w.Value.ID, platform.SigQuoteRequest{Type: "personal_sign", Message: msg})
	var approvalID string
	if q.Value.ApprovalID != nil { // the default policy: signatures need approval
		approvalID = *q.Value.ApprovalID
		approver.DecideApproval(ctx, approvalID, platform.ApprovalDecision{Decision: "approve"})
	}
	sig, _ := agent.CreateSignature(ctx, w.Value.ID, platform.SigCreateRequest{QuoteID: q.Value.ID, ApprovalID: approvalID})
	fmt.Println(sig.Value.Signature, sig.Value.Address)

	sq, _ := agent.QuoteSwap(ctx, platform.SwapQuoteRequest{WalletID: w.Value.ID, FromChainID: 1337, ToChainID: 1337,
		FromToken: "USDC", ToToken: "WETH", FromAmount: "2500000"})
	sw, _ := agent.ExecuteSwap(ctx, platform.ExecuteRequest{QuoteID: sq.Value.ID})
	for sw.OK && (sw.Value.Status == "pending" || sw.Value.Status == "pending_approval") {
		time.Sleep(time.Second)
		sw, _ = agent.GetSwap(ctx, sw.Value.ID)
	}
	fmt.Println(sw.Value.Status, sw.Value.ToAmount)
}
