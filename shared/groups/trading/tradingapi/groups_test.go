package tradingapi_test

import (
	"platformapi/shared/groups/trading/tradingapi"
	"platformapi/shared/groups/webhooks/webhooksapi"
	"platformapi/shared/harness/apitest"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(tradingapi.Group, webhooksapi.Group)
