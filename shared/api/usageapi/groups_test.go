package usageapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/filesapi"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/api/usageapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(usageapi.Group, servicesapi.Group, filesapi.Group)
