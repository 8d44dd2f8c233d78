package httpapi_test

import "platformapi/shared/store/teststores"

// The black-box tests run on every storage backend this run can reach.
var (
	embedded = teststores.Embedded
	backends = teststores.All
)
