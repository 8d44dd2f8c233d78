package runsapi_test

import (
	"platformapi/shared/apitest"
	"platformapi/shared/groups/runs/runsapi"
	"platformapi/shared/groups/services/servicesapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(runsapi.Group, servicesapi.Group)
