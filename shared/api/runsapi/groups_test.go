package runsapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/runsapi"
	"platformapi/shared/api/servicesapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(runsapi.Group, servicesapi.Group)
