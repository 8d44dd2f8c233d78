package sdktest_test

import (
	"platformapi/shared/api/apitest"
	groups "platformapi/shared/platform"
)

// These tests reach the whole platform: every group of the list.
var _ = apitest.Serve(groups.Groups...)
