package connectionsapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/connectionsapi"
	"platformapi/shared/api/mcpapi"
	"platformapi/shared/api/runsapi"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/api/webhooksapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(connectionsapi.Group, servicesapi.Group, mcpapi.Group, runsapi.Group, webhooksapi.Group)
