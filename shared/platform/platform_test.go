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
