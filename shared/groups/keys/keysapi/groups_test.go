package keysapi_test

import (
	"platformapi/shared/groups/services/servicesapi"
	"platformapi/shared/groups/webhooks/webhooksapi"
	"platformapi/shared/harness/apitest"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(webhooksapi.Group, servicesapi.Group)
