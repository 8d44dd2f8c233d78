package devchain_test

import (
	"bufio"
	"context"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/base/chain/devchain"
)

// killedChainSends is how many transfers the child process confirms
// before it is killed.
const killedChainSends = 12

// The child of TestEveryReceiptSeenSurvivesAKill9: it opens the chain in
// DEVCHAIN_KILL_DIR, prints each transfer's hash once its receipt is seen,
// then waits to be killed.
func killedChainChild() {
	ctx := context.Background()
	dev, err := devchain.Open(ctx, os.Getenv("DEVCHAIN_KILL_DIR"), devchain.Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	who := common.HexToAddress("0x00000000000000000000000000000000000bEEF2")
	for i := 0; i < killedChainSends; i++ {
		hash, err := dev.Faucet().Fund(ctx, who, "USDC", big.NewInt(int64(i+1)))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("confirmed", hash.Hex())
	}
	fmt.Println("done")
	select {}
}

// A receipt the chain has shown is on disk: a SIGKILL right after the
// confirmations loses none of them, and the chain goes on from there.
func TestEveryReceiptSeenSurvivesAKill9(t *testing.T) {
	if os.Getenv("DEVCHAIN_KILL_DIR") != "" {
		killedChainChild()
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEveryReceiptSeenSurvivesAKill9$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DEVCHAIN_KILL_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var confirmed []common.Hash
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		line := lines.Text()
		if hash, ok := strings.CutPrefix(line, "confirmed "); ok {
			confirmed = append(confirmed, common.HexToHash(hash))
		}
		if line == "done" || strings.HasPrefix(line, "error") {
			break
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if len(confirmed) != killedChainSends {
		t.Fatalf("the child confirmed %d of %d transfers", len(confirmed), killedChainSends)
	}

	dev, err := devchain.Open(context.Background(), dir, devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	lost := 0
	for _, h := range confirmed {
		if r, err := dev.Client().TransactionReceipt(context.Background(), h); err != nil || r.Status != 1 {
			lost++
		}
	}
	t.Logf("%d of %d confirmed transfers survived kill -9", len(confirmed)-lost, len(confirmed))
	if lost > 0 {
		t.Fatalf("%d of %d confirmed transfers have no receipt after kill -9", lost, len(confirmed))
	}
	who := common.HexToAddress("0x00000000000000000000000000000000000bEEF2")
	if _, err := dev.Faucet().Fund(context.Background(), who, "USDC", big.NewInt(1)); err != nil {
		t.Fatalf("the faucet goes on after kill -9: %v", err)
	}
}
