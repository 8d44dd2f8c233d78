package platform_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
	"platformapi/shared/api"
	"platformapi/shared/base/routes"
	"platformapi/shared/groups/public/publicapi"
	"platformapi/shared/platform"
)

// The public function serves the document embedded at build time; it must
// be exactly what the groups register now. `make openapi` regenerates it.
func TestTheEmbeddedOpenAPIDocumentIsCurrent(t *testing.T) {
	doc, err := platform.Document()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(doc), bytes.TrimSpace(publicapi.Document)) {
		t.Fatal("shared/groups/public/publicapi/openapi.json is stale: run make openapi")
	}
}

// Every operation of the route table is in the document, built or 501.
func TestTheDocumentHasEveryRouteOfTheTable(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(publicapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	for _, rt := range append(append([]routes.Route{}, routes.Public...), routes.Table...) {
		if got := doc.Paths[rt.Path][lower(rt.Method)].OperationID; got != rt.ID {
			t.Errorf("%s %s: operationId %q, want %q", rt.Method, rt.Path, got, rt.ID)
		}
	}
}

func lower(s string) string { return string(bytes.ToLower([]byte(s))) }

// Each queue's name, variables and stack ids are its own, whether the
// kernel (package work) or a group declares it, and it has a consumer and
// a redrive limit: infra, awsenv and the embedded backend key everything by
// them.
func TestEveryQueueIsDeclaredOnceWithItsConsumerAndRedriveLimit(t *testing.T) {
	seen := map[string]string{}
	queues, err := platform.Queues()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queues {
		for _, key := range []string{"name " + q.Name, "env " + q.Env, "stack " + q.Stack} {
			if other, dup := seen[key]; dup {
				t.Errorf("queues %s and %s share %s", other, q.Name, key)
			}
			seen[key] = q.Name
		}
		if q.Name == "" || q.Env == "" || q.Stack == "" || q.Consumer == "" || q.MaxReceives < 1 || q.MaxAge <= 0 || q.Stuck == "" || q.DeadLettered == "" {
			t.Errorf("queue %+v: every field is required", q)
		}
	}
}

// A schedule runs at a whole number of minutes on AWS (an EventBridge
// rate) and locally never less often, and every pass the local process
// runs is a scheduled function's, at that declaration's local rate: the
// rule and the loop read one declaration.
func TestEveryPassRunsAtItsFunctionsScheduleAWholeMinuteRateOnAWS(t *testing.T) {
	d, err := platform.Deployment()
	if err != nil {
		t.Fatal(err)
	}
	scheduled := map[string]deploy.Function{}
	for _, f := range d.Functions {
		s := f.Schedule
		if s == (work.Schedule{}) {
			continue
		}
		scheduled[f.Name] = f
		if s.Every < time.Minute || s.Every%time.Minute != 0 || s.LocalEvery() <= 0 || s.LocalEvery() > s.Every {
			t.Errorf("%s: every %v on AWS, %v locally", f.Name, s.Every, s.LocalEvery())
		}
	}
	if len(scheduled) == 0 {
		t.Fatal("no group declares a scheduled function: the file sweeper should be one")
	}
	groups, err := api.Build(platform.Groups, ports.Ports{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	passes := api.WorkOf(groups).Passes
	if len(passes) == 0 {
		t.Fatal("the local process runs no pass")
	}
	for _, p := range passes {
		f, ok := scheduled[p.Name]
		if !ok {
			t.Errorf("pass %s: no scheduled function of that name declares its rate", p.Name)
		} else if p.Every != f.Schedule.LocalEvery() {
			t.Errorf("pass %s: every %v locally, its declaration says %v", p.Name, p.Every, f.Schedule.LocalEvery())
		}
	}
}
