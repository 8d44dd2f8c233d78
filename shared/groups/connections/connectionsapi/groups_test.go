package connectionsapi_test

import (
	"platformapi/shared/groups/connections/connectionsapi"
	"platformapi/shared/groups/mcp/mcpapi"
	"platformapi/shared/groups/runs/runsapi"
	"platformapi/shared/groups/services/servicesapi"
	"platformapi/shared/groups/webhooks/webhooksapi"
	"platformapi/shared/harness/apitest"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(connectionsapi.Group, servicesapi.Group, mcpapi.Group, runsapi.Group, webhooksapi.Group)
