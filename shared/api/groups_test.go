package api_test

import (
	"platformapi/shared/apitest"
	"platformapi/shared/platform"
)

// These tests reach the whole platform: every group of the list.
var _ = apitest.Serve(platform.Groups...)
