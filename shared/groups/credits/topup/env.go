package topup

import (
	"fmt"
	"strconv"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/credits/x402"
	"platformapi/shared/groups/credits/x402/httpfacilitator"
	"platformapi/shared/groups/credits/x402/localfacilitator"
)

// devPayTo receives development top-ups in embedded mode. The local
// facilitator moves no money, so nothing is ever sent there.
const devPayTo = "0x000000000000000000000000000000000000dEaD"

// FromEnv reads the x402 configuration: X402_NETWORK, X402_ASSET,
// X402_ASSET_NAME, X402_ASSET_VERSION, X402_PAY_TO, X402_MAX_TIMEOUT_SECONDS,
// X402_RPC_URL (a JSON-RPC endpoint of the network, to reconcile lost settlements),
// and the facilitator: X402_FACILITATOR_URL (+ X402_FACILITATOR_API_KEY), or
// X402_FACILITATOR=local for the development-only local facilitator, which
// is the default in embedded mode only. Defaults are Base Sepolia USDC.
// getenv reads the variables (os.Getenv in a deployment), now is the local
// facilitator's clock (nil: time.Now).
func FromEnv(getenv func(string) string, embedded bool, st store.Store, now func() time.Time) (TopUpConfig, x402.Facilitator, error) {
	envOr := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	cfg := TopUpConfig{
		Network:      envOr("X402_NETWORK", "eip155:84532"),
		Asset:        envOr("X402_ASSET", "0x036CbD53842c5426634e7929541eC2318f3dCF7e"),
		AssetName:    envOr("X402_ASSET_NAME", "USDC"),
		AssetVersion: envOr("X402_ASSET_VERSION", "2"),
		PayTo:        getenv("X402_PAY_TO"),
		RPCURL:       getenv("X402_RPC_URL"),
	}
	timeout, err := strconv.ParseInt(envOr("X402_MAX_TIMEOUT_SECONDS", "600"), 10, 64)
	if err != nil {
		return cfg, nil, fmt.Errorf("topup: X402_MAX_TIMEOUT_SECONDS: %w", err)
	}
	cfg.MaxTimeoutSeconds = timeout
	if cfg.PayTo == "" && embedded {
		cfg.PayTo = devPayTo
	}
	var fac x402.Facilitator
	switch url := getenv("X402_FACILITATOR_URL"); {
	case url != "":
		fac, err = httpfacilitator.New(httpfacilitator.Config{BaseURL: url, APIKey: getenv("X402_FACILITATOR_API_KEY")})
		if err != nil {
			return cfg, nil, fmt.Errorf("topup: X402_FACILITATOR_URL: %w", err)
		}
	case embedded || getenv("X402_FACILITATOR") == "local":
		fac = localfacilitator.New(st, localfacilitator.Config{Now: now})
	}
	if cfg.PayTo != "" {
		if _, err := cfg.Requirements(500).Terms(); err != nil {
			return cfg, nil, fmt.Errorf("topup: x402 configuration: %w", err)
		}
	}
	return cfg, fac, nil
}
