package projectsapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/projectsapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(projectsapi.Group)
