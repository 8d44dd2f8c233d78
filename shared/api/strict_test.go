package api_test

import (
	"testing"

	"platformapi/shared/harness/apitest"
)

// A JSON body naming one key twice, or in two cases, is refused: what the
// access controls and an approval saw must be what the operation reads.
func TestBodiesWithRepeatedOrCaseVariantKeysAreRefused(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	for name, body := range map[string]string{
		"repeated":     `{"name":"a","name":"b"}`,
		"case variant": `{"name":"a","Name":"b"}`,
		"nested":       `{"name":"a","metadata":{"team":"x","TEAM":"y"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: []byte(body),
				Headers: map[string]string{"Content-Type": "application/json"}})
			e.Must(r, 400, "validation_failed")
		})
	}
	invoke := `{"operationId":"memory.write","input":{"text":"a","Text":"b"}}`
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: root, Idem: apitest.Idem(), Body: []byte(invoke),
		Headers: map[string]string{"Content-Type": "application/json"}}), 400, "validation_failed")
	if got := e.Balance(root); got != 1 {
		t.Fatalf("balance %v: a refused body was charged", got)
	}
}
