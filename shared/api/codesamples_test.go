package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"platformapi/shared/platform"
)

// TestEveryOperationShowsItsRequestInCurlGoAndTypeScript: the reference
// shows each operation's request as a client sends it, and only idempotent
// operations send an Idempotency-Key.
func TestEveryOperationShowsItsRequestInCurlGoAndTypeScript(t *testing.T) {
	raw, err := platform.Document()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Idempotent  bool   `json:"x-idempotent"`
			Security    []any  `json:"security"`
			Samples     []struct {
				Lang, Source string
			} `json:"x-codeSamples"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths {
		for method, op := range item {
			if len(op.Samples) != 3 {
				t.Errorf("%s: %d samples, want curl, Go and TypeScript", op.OperationID, len(op.Samples))
				continue
			}
			for _, s := range op.Samples {
				upper := strings.ToUpper(method)
				if !strings.Contains(s.Source, "/v1"+strings.Split(path, "{")[0]) || (upper != "GET" || s.Lang != "Shell") && !strings.Contains(s.Source, upper) {
					t.Errorf("%s %s: the %s sample does not request %s %s:\n%s", method, path, s.Lang, upper, path, s.Source)
				}
				if got := strings.Contains(s.Source, "Idempotency-Key"); got != op.Idempotent {
					t.Errorf("%s: the %s sample sends an Idempotency-Key: %v, the operation is idempotent: %v", op.OperationID, s.Lang, got, op.Idempotent)
				}
				if got, want := strings.Contains(s.Source, "Authorization"), len(op.Security) > 0; got != want {
					t.Errorf("%s: the %s sample authenticates: %v, the operation needs a key: %v", op.OperationID, s.Lang, got, want)
				}
			}
		}
	}
}
