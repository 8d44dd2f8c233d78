package databasesapi_test

import (
	"platformapi/shared/api/apitest"
	"platformapi/shared/api/databasesapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(databasesapi.Group)
