package usageapi_test

import (
	"platformapi/shared/groups/files/filesapi"
	"platformapi/shared/groups/services/servicesapi"
	"platformapi/shared/groups/usage/usageapi"
	"platformapi/shared/harness/apitest"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(usageapi.Group, servicesapi.Group, filesapi.Group)
