package sdktest_test

import (
	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
	groups "platformapi/shared/platform"
)

// These tests reach the whole platform: every group of the list.
var _ = apitest.Serve(groups.Groups...)

// The groups these tests serve on the development chain, wired together.
var _ = chaintest.Serve(groups.OnChain...)
