package exampleapi_test

import (
	"testing"

	"platformapi/shared/api/apitest"
)

func TestAnExampleIsQueued(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/examples", Key: root, Idem: apitest.Idem()}), 202)
}
