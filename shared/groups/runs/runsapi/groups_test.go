package runsapi_test

import (
	"platformapi/shared/groups/runs/runsapi"
	"platformapi/shared/groups/services/servicesapi"
	"platformapi/shared/harness/apitest"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(runsapi.Group, servicesapi.Group)
