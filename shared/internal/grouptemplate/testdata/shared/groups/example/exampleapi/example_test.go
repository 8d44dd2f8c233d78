package exampleapi_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"platformapi/shared/groups/example"
	"platformapi/shared/groups/example/exampleapi"
	"platformapi/shared/groups/webhooks"
	"platformapi/shared/harness/apitest"
)

var _ = apitest.Serve(exampleapi.Group)

// A queued example is marked done by the group's worker, on the queue and
// the table the served group was given.
func TestAQueuedExampleIsMarkedDoneByItsWorker(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	var out struct{ ID string }
	if err := json.Unmarshal(e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/examples", Key: root, Idem: apitest.Idem()}), 202).Raw, &out); err != nil || out.ID == "" {
		t.Fatalf("no id queued: %v", err)
	}
	e.StartWorker(example.Queue.Consumer)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := e.Store.Get(context.Background(), example.Done(out.ID)); err == nil {
			return
		}
	}
	t.Fatalf("the worker never marked %s done", out.ID)
}

// The group's own scope guards its route: a first key holds it, a child
// key without it is refused, and a child key granted it may call the route.
func TestTheGroupsRouteNeedsItsOwnScope(t *testing.T) {
	e := apitest.New(t)
	root, rec := e.RootKey(10, nil)
	if scopes := apitest.Strs(rec.Body["scopes"]); !slices.Contains(scopes, "examples:write") {
		t.Fatalf("a first key holds %v, no examples:write", scopes)
	}
	without, _ := e.Child(root, map[string]any{"label": "runs", "scopes": []string{"runs:write"}})
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/examples", Key: without, Idem: apitest.Idem()}), 403, "scope_denied")
	with, _ := e.Child(root, map[string]any{"label": "examples", "scopes": []string{"examples:write"}})
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/examples", Key: with, Idem: apitest.Idem()}), 202)
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
