package walletsapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/apitest/chaintest"
	"platformapi/shared/api/approvalsapi"
	"platformapi/shared/api/walletsapi"
	"platformapi/shared/api/webhooksapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(walletsapi.Group, approvalsapi.Group, webhooksapi.Group)

// The groups these tests serve on the development chain, wired together.
var _ = chaintest.Serve(walletsapi.On)
