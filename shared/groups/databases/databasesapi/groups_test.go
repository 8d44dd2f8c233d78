package databasesapi_test

import (
	"platformapi/shared/apitest"
	"platformapi/shared/groups/databases/databasesapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(databasesapi.Group)
