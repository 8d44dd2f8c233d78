package swapsapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/apitest/chaintest"
	"platformapi/shared/api/approvalsapi"
	"platformapi/shared/api/swapsapi"
	"platformapi/shared/api/walletsapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(swapsapi.Group, walletsapi.Group, approvalsapi.Group)

// The groups these tests serve on the development chain, wired together.
var _ = chaintest.Serve(walletsapi.On, swapsapi.On)
