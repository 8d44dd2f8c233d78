package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"platformapi/shared/app"
	"platformapi/shared/base/chain"
	"platformapi/shared/base/chain/devchain"
)

// openChain starts the local development chain under DATA_DIR/chain (its
// JSON-RPC also on CHAIN_RPC_ADDR, default a free loopback port, written to
// DATA_DIR/chain/endpoint) and gives the runtime it together with the
// chains RPC_URL_<id> names.
func openChain(ctx context.Context, cfg app.Config, rt *app.Runtime) (*devchain.Chain, error) {
	addr := os.Getenv("CHAIN_RPC_ADDR")
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	dev, err := devchain.Open(ctx, filepath.Join(cfg.DataDir, "chain"), devchain.Options{RPCAddr: addr})
	if err != nil {
		return nil, fmt.Errorf("local chain: %w", err)
	}
	remote, err := chain.FromEnv(os.Environ())
	var nets *chain.Networks
	if err == nil {
		nets, err = remote.With(dev.Network())
	}
	if err == nil {
		rt.Resources.Chains = nets
	}
	if err != nil {
		dev.Close()
		return nil, err
	}
	return dev, nil
}

// fund sends amount (in whole units of the asset, decimals allowed: 1.5
// USDC) from the local chain's faucet: through the running server's
// JSON-RPC endpoint when there is one, else on the chain opened here.
func fund(cfg app.Config, args []string) error {
	fs := flag.NewFlagSet("fund", flag.ContinueOnError)
	address := fs.String("address", "", "the address to fund (0x…)")
	asset := fs.String("asset", "", "USDC, WETH or ETH")
	amount := fs.String("amount", "", "how much, in whole units of the asset (e.g. 100 or 0.5)")
	dataDirFlag(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := serverData(fs, cfg.DataDir, filepath.Join("chain", "faucet.key")); err != nil {
		return err
	}
	if !common.IsHexAddress(*address) {
		return errors.New("--address must be an address (0x and 40 hex digits)")
	}
	places := map[string]int{"ETH": 18, "WETH": 18, "USDC": 6}[strings.ToUpper(*asset)]
	if places == 0 {
		return errors.New("--asset must be USDC, WETH or ETH")
	}
	units, ok := parseUnits(*amount, places)
	if !ok {
		return fmt.Errorf("--amount must be a positive number of %s with at most %d decimals", strings.ToUpper(*asset), places)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := filepath.Join(cfg.DataDir, "chain")
	var f *devchain.Faucet
	if raw, err := os.ReadFile(filepath.Join(dir, "endpoint")); err == nil {
		if c, err := ethclient.DialContext(ctx, strings.TrimSpace(string(raw))); err == nil {
			if _, err := c.BlockNumber(ctx); err == nil {
				key, err := devchain.FaucetKey(dir)
				if err != nil {
					return err
				}
				f = &devchain.Faucet{Key: key, Client: c}
				fmt.Fprintf(os.Stderr, "using the chain of %s through the running server's RPC %s\n", absDir(cfg.DataDir), strings.TrimSpace(string(raw)))
			}
		}
	}
	if f == nil {
		dev, err := devchain.Open(ctx, dir, devchain.Options{})
		if err != nil {
			return err
		}
		defer dev.Close()
		f = dev.Faucet()
		fmt.Fprintf(os.Stderr, "using the chain of %s (its server is not running: opened here)\n", absDir(cfg.DataDir))
	}
	hash, err := f.Fund(ctx, common.HexToAddress(*address), *asset, units)
	if err != nil {
		return err
	}
	fmt.Printf("funded %s with %s %s (%s base units) in %s\n", common.HexToAddress(*address).Hex(), *amount, strings.ToUpper(*asset), units, hash.Hex())
	return nil
}

// parseUnits reads a positive decimal with at most places decimals as base
// units (1.5 with 6 places is 1500000).
func parseUnits(s string, places int) (*big.Int, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > places || strings.Trim(whole+frac, "0123456789") != "" || len(s) > 90 {
		return nil, false
	}
	n, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", places-len(frac)), 10)
	return n, ok && n.Sign() > 0
}
