package exampleapi_test

import (
	"encoding/json"
	"slices"
	"testing"

	"platformapi/shared/apitest"
	"platformapi/shared/groups/example"
	"platformapi/shared/groups/example/exampleapi"
	"platformapi/shared/groups/webhooks"
)

var _ = apitest.Serve(exampleapi.Group)

func TestAnExampleIsQueuedAndItsWorkerRuns(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/examples", Key: root, Idem: apitest.Idem()}), 202)
	e.StartWorker(example.Queue.Consumer)
}

// The group's catalogue entries reach the whole catalogues through the
// generated tables: its service is priced and its event can be subscribed to.
func TestTheGroupsServiceIsPricedAndItsEventKnown(t *testing.T) {
	e := apitest.New(t)
	var body struct {
		Services []struct {
			ServiceID string `json:"serviceId"`
		} `json:"services"`
	}
	if err := json.Unmarshal(e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/pricing"}), 200).Raw, &body); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range body.Services {
		ids = append(ids, s.ServiceID)
	}
	if !slices.Contains(ids, "example-service") {
		t.Errorf("GET /v1/pricing lists %v, no example-service", ids)
	}
	if !webhooks.KnownEvent("example.queued") {
		t.Error("example.queued is not in the event catalogue")
	}
}
