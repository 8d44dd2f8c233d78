// Package contracts holds the Solidity contracts of the local development
// chain and their Go bindings. They exist only so that a machine with no
// network access can exercise the managed wallets and universal swaps end to
// end: TestToken is the ERC-20 behind the local test USDC (6 decimals) and
// test WETH (18 decimals), and Pool is the constant-product pool the local
// swap router quotes from and swaps through. Nothing here is deployed to, or
// meant for, a public network: the deployer of a TestToken may mint at will,
// and Pool has no LP token, so liquidity once added stays.
//
// Pool prices as Uniswap v2 does, with the 30 bps fee taken from the input:
//
//	amountOut = amountIn*9970*reserveOut / (reserveIn*10000 + amountIn*9970)
//
// in integer arithmetic, so a router's quote computed with *big.Int and the
// pool's getAmountOut agree to the last unit.
//
// The .sol files are the sources. build/ holds what solc 0.8.28 made of them
// (ABI and creation bytecode), and testtoken.go and pool.go are abigen's
// classic bindings of those; all three are generated and committed, so a
// build needs neither Node nor solc. After editing a contract run
//
//	make contracts
//
// and commit the result; `make contracts-check` fails while the committed
// outputs differ from a fresh compile (see mk/contracts.mk).
package contracts
