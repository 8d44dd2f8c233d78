package databasesapi_test

import (
	"platformapi/shared/groups/databases/databasesapi"
	"platformapi/shared/harness/apitest"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(databasesapi.Group)
