package creditsapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/platform"
)

// The ledger's tests charge through every priced group (services, runs,
// trading, databases, wallets, swaps): they reach the whole platform.
var _ = apitest.Serve(platform.Groups...)
