package tradingapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/tradingapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(tradingapi.Group)
