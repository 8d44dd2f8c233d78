package keysapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/projectsapi"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/api/webhooksapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(projectsapi.Group, webhooksapi.Group, servicesapi.Group)
