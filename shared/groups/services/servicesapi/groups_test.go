package servicesapi_test

import (
	"platformapi/shared/groups/approvals/approvalsapi"
	"platformapi/shared/groups/mcp/mcpapi"
	"platformapi/shared/groups/runs/runsapi"
	"platformapi/shared/groups/services/servicesapi"
	"platformapi/shared/groups/usage/usageapi"
	"platformapi/shared/groups/webhooks/webhooksapi"
	"platformapi/shared/harness/apitest"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(servicesapi.Group, mcpapi.Group, approvalsapi.Group, webhooksapi.Group, runsapi.Group, usageapi.Group)
