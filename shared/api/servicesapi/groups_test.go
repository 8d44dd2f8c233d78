package servicesapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/approvalsapi"
	"platformapi/shared/api/mcpapi"
	"platformapi/shared/api/runsapi"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/api/webhooksapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(servicesapi.Group, mcpapi.Group, approvalsapi.Group, webhooksapi.Group, runsapi.Group)
