package walletsapi_test

import (
	"platformapi/shared/apitest"
	"platformapi/shared/apitest/chaintest"
	"platformapi/shared/groups/approvals/approvalsapi"
	"platformapi/shared/groups/wallets/walletsapi"
	"platformapi/shared/groups/webhooks/webhooksapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(walletsapi.Group, approvalsapi.Group, webhooksapi.Group)

// The groups these tests serve on the development chain, wired together.
var _ = chaintest.Serve(walletsapi.On)
