package webhooksapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/approvalsapi"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/api/webhooksapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(webhooksapi.Group, servicesapi.Group, approvalsapi.Group)
