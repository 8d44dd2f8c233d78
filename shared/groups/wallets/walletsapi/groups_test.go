package walletsapi_test

import (
	"platformapi/shared/groups/approvals/approvalsapi"
	"platformapi/shared/groups/wallets/walletsapi"
	"platformapi/shared/groups/webhooks/webhooksapi"
	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(walletsapi.Group, approvalsapi.Group, webhooksapi.Group)

// The groups these tests serve on the development chain, wired together.
var _ = chaintest.Serve(walletsapi.On)
