package platform_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"platformapi/shared/api/publicapi"
	"platformapi/shared/platform"
	"platformapi/shared/routes"
)

// The public function serves the document embedded at build time; it must
// be exactly what the groups register now. `make openapi` regenerates it.
func TestTheEmbeddedOpenAPIDocumentIsCurrent(t *testing.T) {
	doc, err := platform.Document()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(doc), bytes.TrimSpace(publicapi.Document)) {
		t.Fatal("shared/api/publicapi/openapi.json is stale: run make openapi")
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
