package httpapi_test

import "testing"

func backends(t *testing.T) []backend { return []backend{embedded} }
