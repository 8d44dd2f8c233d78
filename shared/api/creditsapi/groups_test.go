package creditsapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/databasesapi"
	"platformapi/shared/api/projectsapi"
	"platformapi/shared/api/swapsapi"
	"platformapi/shared/api/walletsapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(walletsapi.Group, swapsapi.Group, databasesapi.Group, projectsapi.Group)
