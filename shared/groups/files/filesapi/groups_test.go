package filesapi_test

import (
	"platformapi/shared/apitest"
	"platformapi/shared/groups/files/filesapi"
	"platformapi/shared/groups/webhooks/webhooksapi"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(filesapi.Group, webhooksapi.Group)
