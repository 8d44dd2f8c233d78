// Package devchain is the persistent local development chain (chain id 1337)
// of functions/local and the tests: go-ethereum's node and eth service with
// a simulated beacon, the way `geth --dev` runs, on a data directory whose
// state survives a restart, a kill -9 included. Archive mode with the hash
// scheme writes every block's state as it is sealed, rather than keeping it
// in memory for a clean shutdown to flush; and each sealed block is synced
// to disk before its receipts are reported (go-ethereum writes pebble
// without sync, so the last blocks sat in pebble's write-ahead log buffer
// inside the process and died with it). A block is sealed as soon as a
// transaction arrives.
//
// On first start it deploys a test USDC (6 decimals), WETH (18) and a
// constant-product pool between them with liquidity, all from a faucet key
// kept in the directory. It is never linked into a Lambda function.
package devchain

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/log"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"

	"platformapi/shared/base/chain"
)

// ChainID is the local chain's id (geth's developer chain).
const ChainID = 1337

// databaseCache is the chain database's cache in MB. go-ethereum's default
// (2,048, sized for mainnet) sets pebble's memtables, and pebble
// preallocates each write-ahead log to a memtable's size: 1.1 GB of disk on
// every fresh local start. 16 is pebble's minimum here (2 MB memtables),
// plenty for a chain of a few thousand blocks.
const databaseCache = 16

// Liquidity the pool starts with: 10,000,000 USDC against 4,000 WETH
// (2,500 USDC a WETH).
var (
	poolUSDC = new(big.Int).Mul(big.NewInt(10_000_000), big.NewInt(1_000_000))
	poolWETH = new(big.Int).Mul(big.NewInt(4_000), big.NewInt(1e18))
)

// Chain is a running local chain.
type Chain struct {
	stack  *node.Node
	eth    *eth.Ethereum
	beacon *catalyst.SimulatedBeacon
	client *ethclient.Client
	faucet *Faucet
	dir    string

	// sealMu orders sealing and syncing; durable is the highest block
	// known to be on disk.
	sealMu  sync.Mutex
	durable atomic.Uint64
	stop    chan struct{}
	done    chan struct{}

	USDC, WETH, Pool common.Address
}

// Options tune Open.
type Options struct {
	// RPCAddr, when set (e.g. "127.0.0.1:0"), also serves JSON-RPC over HTTP
	// there, so wallets outside the process (and `local fund`) reach the
	// chain; the endpoint is written to <dir>/endpoint.
	RPCAddr string
}

// Open starts the chain kept in dir, creating it (and deploying the
// contracts) on first use.
func Open(ctx context.Context, dir string, opt Options) (*Chain, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	log.SetDefault(log.NewLogger(log.DiscardHandler()))
	faucet, err := loadOrCreateKey(filepath.Join(dir, "faucet.key"))
	if err != nil {
		return nil, err
	}
	faucetAddr := crypto.PubkeyToAddress(faucet.PublicKey)

	nodeConf := node.DefaultConfig
	nodeConf.DataDir = filepath.Join(dir, "node")
	nodeConf.P2P = p2p.Config{NoDiscovery: true, MaxPeers: 0, NoDial: true, ListenAddr: ""}
	nodeConf.IPCPath = ""
	nodeConf.HTTPHost, nodeConf.HTTPPort = "", 0
	nodeConf.WSHost = ""
	nodeConf.AuthPort = 0
	if opt.RPCAddr != "" {
		host, port, err := splitHostPort(opt.RPCAddr)
		if err != nil {
			return nil, err
		}
		nodeConf.HTTPHost, nodeConf.HTTPPort = host, port
		nodeConf.HTTPModules = []string{"eth", "net", "web3"}
		nodeConf.HTTPVirtualHosts = []string{"localhost", "127.0.0.1"}
	}
	stack, err := node.New(&nodeConf)
	if err != nil {
		return nil, fmt.Errorf("devchain: node: %w", err)
	}
	ethConf := ethconfig.Defaults
	ethConf.NetworkId = ChainID
	ethConf.Genesis = core.DeveloperGenesisBlock(ethconfig.Defaults.Miner.GasCeil, &faucetAddr)
	ethConf.SyncMode = ethconfig.FullSync
	ethConf.StateScheme = rawdb.HashScheme
	ethConf.NoPruning = true
	ethConf.DatabaseCache = databaseCache
	ethConf.TxPool.NoLocals = true
	ethConf.Miner.PendingFeeRecipient = faucetAddr
	ethConf.Miner.GasPrice = big.NewInt(1)
	backend, err := eth.New(stack, &ethConf)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("devchain: eth: %w", err)
	}
	if err := stack.Start(); err != nil {
		stack.Close()
		return nil, fmt.Errorf("devchain: start: %w", err)
	}
	beacon, err := catalyst.NewSimulatedBeacon(0, faucetAddr, backend)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("devchain: beacon: %w", err)
	}
	c := &Chain{stack: stack, eth: backend, beacon: beacon, client: ethclient.NewClient(stack.Attach()), dir: dir,
		stop: make(chan struct{}), done: make(chan struct{})}
	c.faucet = &Faucet{Key: faucet, Client: c.client}
	go c.sealOnArrival()
	if err := c.deploy(ctx); err != nil {
		c.Close()
		return nil, err
	}
	endpoint := filepath.Join(dir, "endpoint")
	if opt.RPCAddr != "" {
		if err := os.WriteFile(endpoint, []byte(stack.HTTPEndpoint()+"\n"), 0o600); err != nil {
			c.Close()
			return nil, err
		}
	} else {
		os.Remove(endpoint)
	}
	return c, nil
}

func splitHostPort(addr string) (string, int, error) {
	host, port, ok := strings.Cut(addr, ":")
	var p int
	if _, err := fmt.Sscanf(port, "%d", &p); !ok || err != nil || p < 0 || p > 65535 {
		return "", 0, fmt.Errorf("devchain: RPC address %q is not host:port", addr)
	}
	return host, p, nil
}

// sealOnArrival seals a block whenever transactions are pending: a
// transaction is mined the moment it is sent, as with `geth --dev`.
func (c *Chain) sealOnArrival() {
	defer close(c.done)
	ch := make(chan core.NewTxsEvent, 64)
	sub := c.eth.TxPool().SubscribeTransactions(ch, true)
	defer sub.Unsubscribe()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ch:
		case <-tick.C:
		}
		if pending, _ := c.eth.TxPool().Stats(); pending > 0 {
			c.Seal()
		}
	}
}

// Seal seals one block now (with whatever is pending) and syncs it to
// disk. Tests call it to let time pass on the chain.
func (c *Chain) Seal() {
	c.sealMu.Lock()
	defer c.sealMu.Unlock()
	c.beacon.Commit()
	_ = c.syncLocked() // a receipt read syncs again before it answers
}

// syncLocked makes every block written so far durable: pebble's sync write
// flushes and fsyncs the write-ahead log, and with it all the unsynced
// writes before it. The caller holds sealMu. A failure leaves durable where
// it was, for the next seal or receipt read to try again.
func (c *Chain) syncLocked() error {
	head := c.eth.BlockChain().CurrentBlock().Number.Uint64()
	if err := c.eth.ChainDb().SyncKeyValue(); err != nil {
		return fmt.Errorf("devchain: sync: %w", err)
	}
	c.durable.Store(head)
	return nil
}

// awaitDurable returns once block n is on disk.
func (c *Chain) awaitDurable(n uint64) error {
	if c.durable.Load() >= n {
		return nil
	}
	c.sealMu.Lock()
	defer c.sealMu.Unlock()
	if c.durable.Load() >= n {
		return nil
	}
	return c.syncLocked()
}

// durableClient is the in-process client whose receipts are on disk: a
// send the API reports confirmed is still mined after a kill -9.
type durableClient struct {
	*ethclient.Client
	c *Chain
}

func (d durableClient) TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	r, err := d.Client.TransactionReceipt(ctx, hash)
	if err == nil && r.BlockNumber != nil {
		if err := d.c.awaitDurable(r.BlockNumber.Uint64()); err != nil {
			return nil, err
		}
	}
	return r, err
}

// Client is the in-process JSON-RPC client.
func (c *Chain) Client() *ethclient.Client { return c.client }

// Endpoint is the HTTP JSON-RPC URL ("" without Options.RPCAddr).
func (c *Chain) Endpoint() string { return c.stack.HTTPEndpoint() }

// Network is the chain as the wallets and swaps services see it.
func (c *Chain) Network() *chain.Network {
	return &chain.Network{ID: ChainID, Client: durableClient{Client: c.client, c: c}, Pool: c.Pool, Assets: []chain.Asset{
		chain.NativeAsset(),
		{Symbol: "USDC", Name: "USD Coin (local test token)", Address: c.USDC, Decimals: 6},
		{Symbol: "WETH", Name: "Wrapped Ether (local test token)", Address: c.WETH, Decimals: 18},
	}}
}

// Close stops the chain, flushing its state.
func (c *Chain) Close() error {
	select {
	case <-c.stop:
		return nil
	default:
	}
	close(c.stop)
	<-c.done
	c.client.Close()
	return errors.Join(c.beacon.Stop(), c.stack.Close())
}

func loadOrCreateKey(path string) (*ecdsa.PrivateKey, error) {
	raw, err := os.ReadFile(path)
	if err == nil {
		return crypto.HexToECDSA(strings.TrimSpace(string(raw)))
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	k, err := crypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(crypto.FromECDSA(k))+"\n"), 0o600); err != nil {
		return nil, err
	}
	return k, os.Rename(tmp, path)
}

// FaucetKey reads the faucet key of the chain kept in dir, for `local fund`
// against a running server.
func FaucetKey(dir string) (*ecdsa.PrivateKey, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "faucet.key"))
	if err != nil {
		return nil, err
	}
	return crypto.HexToECDSA(strings.TrimSpace(string(raw)))
}
