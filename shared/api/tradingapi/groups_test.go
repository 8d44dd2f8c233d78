package tradingapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/tradingapi"
	"platformapi/shared/api/webhooksapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(tradingapi.Group, webhooksapi.Group)
