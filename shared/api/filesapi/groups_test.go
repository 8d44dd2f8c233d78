package filesapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/filesapi"
	"platformapi/shared/api/webhooksapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(filesapi.Group, webhooksapi.Group)
