package exampleapi_test

import (
	"testing"

	"platformapi/shared/api/apitest"
	"platformapi/shared/api/exampleapi"
	"platformapi/shared/example"
)

var _ = apitest.Serve(exampleapi.Group)

func TestAnExampleIsQueuedAndItsWorkerRuns(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/examples", Key: root, Idem: apitest.Idem()}), 202)
	e.StartWorker(example.Queue.Consumer)
}
