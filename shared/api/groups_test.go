package api_test

import (
	"platformapi/shared/harness/apitest"
	"platformapi/shared/platform"
)

// These tests reach the whole platform: every group of the list.
var _ = apitest.Serve(platform.Groups...)
