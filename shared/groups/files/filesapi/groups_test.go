package filesapi_test

import (
	"platformapi/shared/groups/files/filesapi"
	"platformapi/shared/groups/webhooks/webhooksapi"
	"platformapi/shared/harness/apitest"
)

// The groups these tests reach besides apitest.Core: their package's
// tests link only these.
var _ = apitest.Serve(filesapi.Group, webhooksapi.Group)
