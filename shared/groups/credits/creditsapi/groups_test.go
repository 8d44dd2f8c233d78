package creditsapi_test

import (
	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
	"platformapi/shared/platform"
)

// The ledger's tests charge through every priced group (services, runs,
// trading, databases, wallets, swaps): they reach the whole platform.
var _ = apitest.Serve(platform.Groups...)

// The groups these tests serve on the development chain, wired together.
var _ = chaintest.Serve(platform.OnChain...)
