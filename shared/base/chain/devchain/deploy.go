package devchain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"platformapi/shared/base/chain"
	"platformapi/shared/base/chain/contracts"
)

// The faucet's first transactions set the chain up, one nonce each, so a
// start interrupted half-way resumes at the first step the chain has not
// seen (the faucet's nonce) and the contracts' addresses follow from the
// faucet's address alone.
const (
	nonceUSDC = iota
	nonceWETH
	noncePool
	nonceMintUSDC
	nonceMintWETH
	nonceApproveUSDC
	nonceApproveWETH
	nonceAddLiquidity
	setupSteps
)

// Addresses are the contracts of the chain whose faucet is faucet.
func Addresses(faucet common.Address) (usdc, weth, pool common.Address) {
	return crypto.CreateAddress(faucet, nonceUSDC), crypto.CreateAddress(faucet, nonceWETH), crypto.CreateAddress(faucet, noncePool)
}

// Faucet sends funds from the chain's faucet key.
type Faucet struct {
	Key    *ecdsa.PrivateKey
	Client *ethclient.Client
	mu     sync.Mutex
}

func (f *Faucet) address() common.Address { return crypto.PubkeyToAddress(f.Key.PublicKey) }

var (
	tokenABI = chain.MustABI(contracts.TestTokenMetaData.ABI)
	poolABI  = chain.MustABI(contracts.PoolMetaData.ABI)
)

func (c *Chain) deploy(ctx context.Context) error {
	f := c.faucet
	c.USDC, c.WETH, c.Pool = Addresses(f.address())
	done, err := c.client.NonceAt(ctx, f.address(), nil)
	if err != nil {
		return err
	}
	for step := done; step < setupSteps; step++ {
		var to *common.Address
		var data []byte
		switch step {
		case nonceUSDC:
			data, err = creation(contracts.TestTokenMetaData.Bin, tokenABI, "USD Coin", "USDC", uint8(6))
		case nonceWETH:
			data, err = creation(contracts.TestTokenMetaData.Bin, tokenABI, "Wrapped Ether", "WETH", uint8(18))
		case noncePool:
			data, err = creation(contracts.PoolMetaData.Bin, poolABI, c.USDC, c.WETH)
		case nonceMintUSDC:
			to = &c.USDC
			data, err = tokenABI.Pack("mint", f.address(), poolUSDC)
		case nonceMintWETH:
			to = &c.WETH
			data, err = tokenABI.Pack("mint", f.address(), poolWETH)
		case nonceApproveUSDC:
			to = &c.USDC
			data, err = tokenABI.Pack("approve", c.Pool, poolUSDC)
		case nonceApproveWETH:
			to = &c.WETH
			data, err = tokenABI.Pack("approve", c.Pool, poolWETH)
		case nonceAddLiquidity:
			to = &c.Pool
			data, err = poolABI.Pack("addLiquidity", poolUSDC, poolWETH)
		}
		if err != nil {
			return fmt.Errorf("devchain: setup step %d: %w", step, err)
		}
		if _, err := f.send(ctx, step, to, big.NewInt(0), data); err != nil {
			return fmt.Errorf("devchain: setup step %d: %w", step, err)
		}
	}
	return nil
}

func creation(bin string, a abi.ABI, args ...any) ([]byte, error) {
	packed, err := a.Pack("", args...)
	if err != nil {
		return nil, err
	}
	return append(common.FromHex(bin), packed...), nil
}

// Fund sends amount base units of asset ("ETH", "USDC", "WETH") to addr:
// ether from the faucet's balance, tokens minted. It returns once mined.
func (f *Faucet) Fund(ctx context.Context, addr common.Address, asset string, amount *big.Int) (common.Hash, error) {
	if amount.Sign() <= 0 {
		return common.Hash{}, errors.New("devchain: the amount must be positive")
	}
	usdc, weth, _ := Addresses(f.address())
	f.mu.Lock()
	defer f.mu.Unlock()
	nonce, err := f.Client.PendingNonceAt(ctx, f.address())
	if err != nil {
		return common.Hash{}, err
	}
	if nonce < setupSteps {
		return common.Hash{}, errors.New("devchain: the chain is not set up yet")
	}
	switch strings.ToUpper(asset) {
	case "ETH":
		return f.send(ctx, nonce, &addr, amount, nil)
	case "USDC", "WETH":
		token := usdc
		if strings.ToUpper(asset) == "WETH" {
			token = weth
		}
		data, err := tokenABI.Pack("mint", addr, amount)
		if err != nil {
			return common.Hash{}, err
		}
		return f.send(ctx, nonce, &token, big.NewInt(0), data)
	}
	return common.Hash{}, fmt.Errorf("devchain: unknown asset %q (ETH, USDC or WETH)", asset)
}

// send signs and sends one faucet transaction and waits for its receipt; a
// reverted one is an error.
func (f *Faucet) send(ctx context.Context, nonce uint64, to *common.Address, value *big.Int, data []byte) (common.Hash, error) {
	tip, feeCap, err := chain.Fees(ctx, f.Client)
	if err != nil {
		return common.Hash{}, err
	}
	gas, err := f.Client.EstimateGas(ctx, ethereum.CallMsg{From: f.address(), To: to, Value: value, Data: data})
	if err != nil {
		return common.Hash{}, err
	}
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(ChainID), Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap,
		Gas: gas + gas/5, To: to, Value: value, Data: data})
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(big.NewInt(ChainID)), f.Key)
	if err != nil {
		return common.Hash{}, err
	}
	if err := f.Client.SendTransaction(ctx, signed); err != nil {
		return common.Hash{}, err
	}
	r, err := WaitMined(ctx, f.Client, signed.Hash())
	if err != nil {
		return signed.Hash(), err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return signed.Hash(), fmt.Errorf("devchain: transaction %s reverted", signed.Hash())
	}
	return signed.Hash(), nil
}

// WaitMined polls for a transaction's receipt and returns once the chain's
// head has reached its block. go-ethereum indexes a block's transactions
// just before it moves the head, so a receipt can be readable while
// "latest" is still the block before: a call estimated right after it
// would not see the transaction's effects.
func WaitMined(ctx context.Context, c interface {
	TransactionReceipt(context.Context, common.Hash) (*types.Receipt, error)
	BlockNumber(context.Context) (uint64, error)
}, hash common.Hash) (*types.Receipt, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		r, err := c.TransactionReceipt(ctx, hash)
		if err == nil {
			head, err := c.BlockNumber(ctx)
			if err != nil {
				return nil, err
			}
			if r.BlockNumber == nil || head >= r.BlockNumber.Uint64() {
				return r, nil
			}
		} else if !chain.NotYet(err) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("devchain: transaction %s not mined: %w", hash, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Faucet is the chain's faucet on its in-process client.
func (c *Chain) Faucet() *Faucet { return c.faucet }
