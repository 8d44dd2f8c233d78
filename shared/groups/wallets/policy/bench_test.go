package policy

import (
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// BenchmarkEvaluateAFullPolicy is the policy's cost on a send: the
// largest policy (50 rules of 10 criteria, address lists of 100) against
// a wallet with the most spends it keeps (2,000).
func BenchmarkEvaluateAFullPolicy(b *testing.B) {
	addrs := make([]string, MaxAddresses)
	for i := range addrs {
		addrs[i] = common.BigToAddress(big.NewInt(int64(i + 1))).Hex()
	}
	var rules []Rule
	for i := 0; i < MaxRules; i++ {
		rules = append(rules, Rule{Action: ActionDeny, Operation: OpTransactionsCreate, Criteria: []Criterion{
			{Type: CriterionRecipient, Op: OpIn, Addresses: addrs},
			{Type: CriterionRollingTotal, Asset: "USDC", WindowSeconds: 86_400, Max: strconv.Itoa(1_000_000_000 + i)},
		}})
	}
	p := Policy{Revision: 1, DefaultAction: ActionAllow, Rules: rules}
	now := time.Now()
	history := make([]Spend, 2000)
	for i := range history {
		history[i] = Spend{Asset: "USDC", Amount: big.NewInt(1000), At: now.Add(-time.Duration(i) * time.Minute)}
	}
	in := Intent{Operation: OpTransactionsCreate, ChainID: 1, To: common.Address{9}, Recipient: common.BigToAddress(big.NewInt(50)), Asset: "USDC", Amount: big.NewInt(5)}
	b.ReportAllocs()
	for b.Loop() {
		if d := Evaluate(p, in, history, now); d.Action != ActionAllow {
			b.Fatal(d)
		}
	}
}
