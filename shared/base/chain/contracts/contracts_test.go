package contracts

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/rpc"
)

// simulatedChainID is the chain id every simulated backend runs with.
var simulatedChainID = big.NewInt(1337)

// chain is a simulated chain with test USDC and WETH deployed by owner, a
// pool between them holding the initial liquidity, and a funded trader who
// has approved the pool for everything it holds.
type chain struct {
	backend  *simulated.Backend
	client   simulated.Client
	owner    *bind.TransactOpts
	trader   *bind.TransactOpts
	stranger *bind.TransactOpts

	usdc, weth         *TestToken
	usdcAddr, wethAddr common.Address
	pool               *Pool
	poolAddr           common.Address
}

var (
	initialUSDC = units(1_000_000, 6) // 1,000,000 USDC
	initialWETH = units(500, 18)      // 500 WETH: 2,000 USDC a WETH
	traderUSDC  = units(10_000_000, 6)
	traderWETH  = units(1_000, 18)
)

func units(whole int64, decimals int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(whole), new(big.Int).Exp(big.NewInt(10), big.NewInt(decimals), nil))
}

func newChain(t *testing.T) *chain {
	t.Helper()
	keys := make([]*ecdsa.PrivateKey, 3)
	alloc := types.GenesisAlloc{}
	for i := range keys {
		key, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = key
		alloc[crypto.PubkeyToAddress(key.PublicKey)] = types.Account{Balance: units(100, 18)}
	}
	backend := simulated.NewBackend(alloc)
	t.Cleanup(func() { backend.Close() })
	c := &chain{backend: backend, client: backend.Client()}
	opts := make([]*bind.TransactOpts, len(keys))
	for i, key := range keys {
		o, err := bind.NewKeyedTransactorWithChainID(key, simulatedChainID)
		if err != nil {
			t.Fatal(err)
		}
		opts[i] = o
	}
	c.owner, c.trader, c.stranger = opts[0], opts[1], opts[2]

	var tx *types.Transaction
	var err error
	c.usdcAddr, tx, c.usdc, err = DeployTestToken(c.owner, c.client, "Test USD Coin", "USDC", 6)
	c.mine(t, tx, err)
	c.wethAddr, tx, c.weth, err = DeployTestToken(c.owner, c.client, "Test Wrapped Ether", "WETH", 18)
	c.mine(t, tx, err)
	c.poolAddr, tx, c.pool, err = DeployPool(c.owner, c.client, c.usdcAddr, c.wethAddr)
	c.mine(t, tx, err)

	for _, m := range []struct {
		token  *TestToken
		to     common.Address
		amount *big.Int
	}{
		{c.usdc, c.owner.From, initialUSDC},
		{c.weth, c.owner.From, initialWETH},
		{c.usdc, c.trader.From, traderUSDC},
		{c.weth, c.trader.From, traderWETH},
	} {
		tx, err = m.token.Mint(c.owner, m.to, m.amount)
		c.mine(t, tx, err)
	}
	tx, err = c.usdc.Approve(c.owner, c.poolAddr, initialUSDC)
	c.mine(t, tx, err)
	tx, err = c.weth.Approve(c.owner, c.poolAddr, initialWETH)
	c.mine(t, tx, err)
	tx, err = c.pool.AddLiquidity(c.owner, initialUSDC, initialWETH)
	c.mine(t, tx, err)
	tx, err = c.usdc.Approve(c.trader, c.poolAddr, traderUSDC)
	c.mine(t, tx, err)
	tx, err = c.weth.Approve(c.trader, c.poolAddr, traderWETH)
	c.mine(t, tx, err)
	return c
}

// mine seals the block holding tx and fails the test unless it succeeded.
func (c *chain) mine(t *testing.T, tx *types.Transaction, err error) *types.Receipt {
	t.Helper()
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	c.backend.Commit()
	receipt, err := c.client.TransactionReceipt(context.Background(), tx.Hash())
	if err != nil {
		t.Fatalf("receipt: %v", err)
	}
	if receipt.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("transaction %s reverted", tx.Hash())
	}
	return receipt
}

func (c *chain) balance(t *testing.T, token *TestToken, holder common.Address) *big.Int {
	t.Helper()
	b, err := token.BalanceOf(nil, holder)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (c *chain) reserves(t *testing.T) (*big.Int, *big.Int) {
	t.Helper()
	r, err := c.pool.GetReserves(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Reserve0, r.Reserve1
}

// deadline is the latest block's time plus offset seconds; a negative offset
// gives a deadline every later block has passed.
func (c *chain) deadline(t *testing.T, offset int64) *big.Int {
	t.Helper()
	head, err := c.client.HeaderByNumber(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return new(big.Int).Add(new(big.Int).SetUint64(head.Time), big.NewInt(offset))
}

// revertReason decodes the Error(string) a node attaches to a failed call or
// gas estimate; "" when err carries no revert data.
func revertReason(err error) string {
	var de rpc.DataError
	if !errors.As(err, &de) {
		return ""
	}
	s, ok := de.ErrorData().(string)
	if !ok {
		return ""
	}
	data, err := hexutil.Decode(s)
	if err != nil {
		return ""
	}
	reason, err := abi.UnpackRevert(data)
	if err != nil {
		return ""
	}
	return reason
}

// constantProductOut is the pool's pricing written independently of the
// contract: Uniswap v2 with 30 bps of the input kept as the fee.
func constantProductOut(amountIn, reserveIn, reserveOut *big.Int) *big.Int {
	inWithFee := new(big.Int).Mul(amountIn, big.NewInt(9970))
	num := new(big.Int).Mul(inWithFee, reserveOut)
	den := new(big.Int).Add(new(big.Int).Mul(reserveIn, big.NewInt(10000)), inWithFee)
	return num.Quo(num, den)
}

func TestSwapPaysTheConstantProductAmountLessTheFee(t *testing.T) {
	c := newChain(t)
	recipient := common.HexToAddress("0x00000000000000000000000000000000000000d1")
	// The pool's reserves as this test computes them, never read back from
	// the contract before being compared.
	model := map[common.Address]*big.Int{
		c.usdcAddr: new(big.Int).Set(initialUSDC),
		c.wethAddr: new(big.Int).Set(initialWETH),
	}
	tokens := map[common.Address]*TestToken{c.usdcAddr: c.usdc, c.wethAddr: c.weth}
	other := map[common.Address]common.Address{c.usdcAddr: c.wethAddr, c.wethAddr: c.usdcAddr}

	cases := []struct {
		name     string
		tokenIn  common.Address
		amountIn *big.Int
	}{
		{"USDC in, WETH out", c.usdcAddr, units(2_000, 6)},
		{"WETH in, USDC out", c.wethAddr, units(1, 18)},
		{"one base unit of USDC in", c.usdcAddr, big.NewInt(1)},
		{"a quarter of the WETH reserve in moves the price", c.wethAddr, units(125, 18)},
		{"USDC back in after the price moved", c.usdcAddr, units(50_000, 6)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tokenOut := other[tc.tokenIn]
			reserveIn, reserveOut := model[tc.tokenIn], model[tokenOut]
			want := constantProductOut(tc.amountIn, reserveIn, reserveOut)

			quoted, err := c.pool.GetAmountOut(nil, tc.tokenIn, tc.amountIn)
			if err != nil {
				t.Fatal(err)
			}
			if quoted.Cmp(want) != 0 {
				t.Fatalf("getAmountOut = %s, constant product gives %s", quoted, want)
			}

			traderInBefore := c.balance(t, tokens[tc.tokenIn], c.trader.From)
			traderOutBefore := c.balance(t, tokens[tokenOut], c.trader.From)
			recipientBefore := c.balance(t, tokens[tokenOut], recipient)
			poolInBefore := c.balance(t, tokens[tc.tokenIn], c.poolAddr)
			poolOutBefore := c.balance(t, tokens[tokenOut], c.poolAddr)

			tx, err := c.pool.SwapExactIn(c.trader, tc.tokenIn, tc.amountIn, quoted, recipient, c.deadline(t, 600))
			receipt := c.mine(t, tx, err)

			var swap *PoolSwap
			for _, l := range receipt.Logs {
				if ev, err := c.pool.ParseSwap(*l); err == nil {
					swap = ev
				}
			}
			if swap == nil {
				t.Fatal("no Swap event")
			}
			if swap.AmountOut.Cmp(want) != 0 || swap.AmountIn.Cmp(tc.amountIn) != 0 ||
				swap.Sender != c.trader.From || swap.TokenIn != tc.tokenIn || swap.TokenOut != tokenOut || swap.To != recipient {
				t.Fatalf("Swap event = %+v, want %s in of %s, %s out of %s to %s",
					swap, tc.amountIn, tc.tokenIn, want, tokenOut, recipient)
			}

			moved := []struct {
				what          string
				before, after *big.Int
				delta         *big.Int
			}{
				{"trader's input token", traderInBefore, c.balance(t, tokens[tc.tokenIn], c.trader.From), new(big.Int).Neg(tc.amountIn)},
				{"trader's output token", traderOutBefore, c.balance(t, tokens[tokenOut], c.trader.From), new(big.Int)},
				{"recipient's output token", recipientBefore, c.balance(t, tokens[tokenOut], recipient), want},
				{"pool's input token", poolInBefore, c.balance(t, tokens[tc.tokenIn], c.poolAddr), tc.amountIn},
				{"pool's output token", poolOutBefore, c.balance(t, tokens[tokenOut], c.poolAddr), new(big.Int).Neg(want)},
			}
			for _, m := range moved {
				if got := new(big.Int).Sub(m.after, m.before); got.Cmp(m.delta) != 0 {
					t.Errorf("%s moved by %s, want %s", m.what, got, m.delta)
				}
			}

			kBefore := new(big.Int).Mul(reserveIn, reserveOut)
			model[tc.tokenIn] = new(big.Int).Add(reserveIn, tc.amountIn)
			model[tokenOut] = new(big.Int).Sub(reserveOut, want)
			if kAfter := new(big.Int).Mul(model[tc.tokenIn], model[tokenOut]); kAfter.Cmp(kBefore) < 0 {
				t.Errorf("the product of the reserves fell from %s to %s", kBefore, kAfter)
			}
			r0, r1 := c.reserves(t)
			if r0.Cmp(model[c.usdcAddr]) != 0 || r1.Cmp(model[c.wethAddr]) != 0 {
				t.Errorf("getReserves = (%s, %s), want (%s, %s)", r0, r1, model[c.usdcAddr], model[c.wethAddr])
			}
		})
	}
}

func TestEachBrokenRuleRevertsWithItsReason(t *testing.T) {
	c := newChain(t)
	foreignAddr, tx, foreign, err := DeployTestToken(c.owner, c.client, "Foreign", "FRN", 18)
	c.mine(t, tx, err)
	tx, err = foreign.Mint(c.owner, c.trader.From, units(1, 18))
	c.mine(t, tx, err)
	tx, err = foreign.Approve(c.trader, c.poolAddr, units(1, 18))
	c.mine(t, tx, err)

	amountIn := units(1_000, 6)
	quote, err := c.pool.GetAmountOut(nil, c.usdcAddr, amountIn)
	if err != nil {
		t.Fatal(err)
	}
	above := new(big.Int).Add(quote, big.NewInt(1))

	cases := []struct {
		name   string
		send   func() (*types.Transaction, error)
		reason string
	}{
		{"a minimum output one unit above the pool's output", func() (*types.Transaction, error) {
			return c.pool.SwapExactIn(c.trader, c.usdcAddr, amountIn, above, c.trader.From, c.deadline(t, 600))
		}, "Pool: INSUFFICIENT_OUTPUT_AMOUNT"},
		{"a deadline already passed", func() (*types.Transaction, error) {
			return c.pool.SwapExactIn(c.trader, c.usdcAddr, amountIn, big.NewInt(0), c.trader.From, c.deadline(t, -1))
		}, "Pool: EXPIRED"},
		{"a token the pool does not hold", func() (*types.Transaction, error) {
			return c.pool.SwapExactIn(c.trader, foreignAddr, units(1, 18), big.NewInt(0), c.trader.From, c.deadline(t, 600))
		}, "Pool: INVALID_TOKEN"},
		{"a quote for a token the pool does not hold", func() (*types.Transaction, error) {
			_, err := c.pool.GetAmountOut(nil, foreignAddr, units(1, 18))
			return nil, err
		}, "Pool: INVALID_TOKEN"},
		{"a swap without allowance carries the token's reason", func() (*types.Transaction, error) {
			return c.pool.SwapExactIn(c.stranger, c.usdcAddr, amountIn, big.NewInt(0), c.stranger.From, c.deadline(t, 600))
		}, "ERC20: insufficient allowance"},
		{"a mint by anyone but the deployer", func() (*types.Transaction, error) {
			return c.usdc.Mint(c.trader, c.trader.From, units(1, 6))
		}, "TestToken: caller is not the owner"},
		{"a transfer beyond the balance", func() (*types.Transaction, error) {
			return c.usdc.Transfer(c.trader, c.stranger.From, new(big.Int).Add(traderUSDC, big.NewInt(1)))
		}, "ERC20: transfer amount exceeds balance"},
		{"a transferFrom beyond the allowance", func() (*types.Transaction, error) {
			return c.usdc.TransferFrom(c.stranger, c.trader.From, c.stranger.From, big.NewInt(1))
		}, "ERC20: insufficient allowance"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := tc.send()
			if err == nil {
				t.Fatalf("accepted (tx %v), want revert %q", tx, tc.reason)
			}
			if got := revertReason(err); got != tc.reason {
				t.Fatalf("revert reason %q (error %v), want %q", got, err, tc.reason)
			}
		})
	}
}

// A swap whose minimum the pool cannot meet still lands in a block when the
// sender fixes its gas, and then it spends gas and nothing else: this is the
// "slippage exceeded" outcome a managed wallet's swap reports.
func TestAMinedSwapBelowItsMinimumMovesNoTokens(t *testing.T) {
	c := newChain(t)
	amountIn := units(5_000, 6)
	quote, err := c.pool.GetAmountOut(nil, c.usdcAddr, amountIn)
	if err != nil {
		t.Fatal(err)
	}
	usdcBefore := c.balance(t, c.usdc, c.trader.From)
	wethBefore := c.balance(t, c.weth, c.trader.From)
	r0Before, r1Before := c.reserves(t)

	opts := *c.trader
	opts.GasLimit = 200_000
	tx, err := c.pool.SwapExactIn(&opts, c.usdcAddr, amountIn, new(big.Int).Add(quote, big.NewInt(1)), c.trader.From, c.deadline(t, 600))
	if err != nil {
		t.Fatal(err)
	}
	c.backend.Commit()
	receipt, err := c.client.TransactionReceipt(context.Background(), tx.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if receipt.Status != types.ReceiptStatusFailed {
		t.Fatal("the swap succeeded, want a reverted transaction")
	}
	if receipt.GasUsed == 0 {
		t.Fatal("a reverted swap used no gas")
	}
	r0, r1 := c.reserves(t)
	for _, m := range []struct {
		what          string
		before, after *big.Int
	}{
		{"trader's USDC", usdcBefore, c.balance(t, c.usdc, c.trader.From)},
		{"trader's WETH", wethBefore, c.balance(t, c.weth, c.trader.From)},
		{"USDC reserve", r0Before, r0},
		{"WETH reserve", r1Before, r1},
	} {
		if m.before.Cmp(m.after) != 0 {
			t.Errorf("%s changed from %s to %s", m.what, m.before, m.after)
		}
	}
}

func TestMintAndTransferMoveBalancesAndSupplyExactly(t *testing.T) {
	c := newChain(t)
	supplyBefore, err := c.weth.TotalSupply(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := new(big.Int).Add(initialWETH, traderWETH); supplyBefore.Cmp(want) != 0 {
		t.Fatalf("WETH supply after the mints = %s, want %s", supplyBefore, want)
	}

	minted := units(7, 18)
	tx, err := c.weth.Mint(c.owner, c.stranger.From, minted)
	c.mine(t, tx, err)
	sent := big.NewInt(123_456_789)
	tx, err = c.weth.Transfer(c.stranger, c.trader.From, sent)
	c.mine(t, tx, err)
	spent := big.NewInt(1_000)
	tx, err = c.weth.Approve(c.trader, c.stranger.From, spent)
	c.mine(t, tx, err)
	tx, err = c.weth.TransferFrom(c.stranger, c.trader.From, c.owner.From, spent)
	c.mine(t, tx, err)

	supply, err := c.weth.TotalSupply(nil)
	if err != nil {
		t.Fatal(err)
	}
	left, err := c.weth.Allowance(nil, c.trader.From, c.stranger.From)
	if err != nil {
		t.Fatal(err)
	}
	ownerAfterLiquidity := new(big.Int) // the owner put all its WETH in the pool
	for _, b := range []struct {
		what      string
		got, want *big.Int
	}{
		{"supply", supply, new(big.Int).Add(supplyBefore, minted)},
		{"stranger", c.balance(t, c.weth, c.stranger.From), new(big.Int).Sub(minted, sent)},
		{"trader", c.balance(t, c.weth, c.trader.From), new(big.Int).Sub(new(big.Int).Add(traderWETH, sent), spent)},
		{"owner", c.balance(t, c.weth, c.owner.From), new(big.Int).Add(ownerAfterLiquidity, spent)},
		{"allowance left", left, new(big.Int)},
	} {
		if b.got.Cmp(b.want) != 0 {
			t.Errorf("%s = %s, want %s", b.what, b.got, b.want)
		}
	}
}

func TestTokensCarryTheirConstructorMetadataAndDeployer(t *testing.T) {
	c := newChain(t)
	for _, tc := range []struct {
		token    *TestToken
		symbol   string
		decimals uint8
	}{
		{c.usdc, "USDC", 6},
		{c.weth, "WETH", 18},
	} {
		symbol, err := tc.token.Symbol(nil)
		if err != nil {
			t.Fatal(err)
		}
		decimals, err := tc.token.Decimals(nil)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := tc.token.Owner(nil)
		if err != nil {
			t.Fatal(err)
		}
		if symbol != tc.symbol || decimals != tc.decimals || owner != c.owner.From {
			t.Errorf("token = (%s, %d, owner %s), want (%s, %d, owner %s)", symbol, decimals, owner, tc.symbol, tc.decimals, c.owner.From)
		}
	}
	token0, err := c.pool.Token0(nil)
	if err != nil {
		t.Fatal(err)
	}
	token1, err := c.pool.Token1(nil)
	if err != nil {
		t.Fatal(err)
	}
	if token0 != c.usdcAddr || token1 != c.wethAddr {
		t.Errorf("pool tokens = (%s, %s), want (%s, %s)", token0, token1, c.usdcAddr, c.wethAddr)
	}
}
