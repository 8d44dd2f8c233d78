package swaps

import (
	"testing"

	"platformapi/shared/base/chain/contracts"
)

// The pool router encodes its calls with its own copy of the Pool's ABI;
// it must be the ABI of the contract the local chain deploys.
func TestPoolABIIsTheDeployedContracts(t *testing.T) {
	if poolABIJSON != contracts.PoolMetaData.ABI {
		t.Fatal("shared/groups/swaps/pool.abi differs from shared/base/chain/contracts/build/Pool.abi: copy it again after `make contracts`")
	}
}
