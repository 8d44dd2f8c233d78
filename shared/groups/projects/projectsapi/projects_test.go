package projectsapi_test

import (
	"testing"

	"platformapi/shared/harness/apitest"
)

func TestProjectLifecycle(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		p := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "alpha", "metadata": map[string]string{"team": "a"}}}), 201)
		id := p.Str("id")
		if p.Str("status") != "active" || p.Body["archivedAt"] != nil {
			t.Fatalf("created = %s", p.Raw)
		}
		u := e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/projects/" + id, Key: root, Idem: apitest.Idem(), Body: map[string]any{"description": "first"}}), 200)
		if u.Str("name") != "alpha" || u.Str("description") != "first" {
			t.Fatalf("updated = %s", u.Raw)
		}
		if got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects/" + id, Key: root}), 200); got.Str("description") != "first" {
			t.Fatalf("read after update = %s", got.Raw)
		}
		e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/projects/" + id, Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": ""}}), 400, "validation_failed")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects/prj_nope", Key: root}), 404, "not_found")
		other, _ := e.RootKey(1, nil)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects/" + id, Key: other}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/projects/" + id, Key: other, Idem: apitest.Idem(), Body: map[string]any{"name": "x"}}), 404, "not_found")
	})
}

// Archiving freezes a project: it stays readable, refuses changes, cannot be
// selected, and keys bound to it can read it and nothing else.
func TestArchivedProjectsAreReadOnlyAndStopTheirKeys(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	id := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "old"}}), 201).Str("id")
	bound, _ := e.Child(root, map[string]any{"projectId": id})
	selectIt := map[string]string{"X-Service-Project": id}
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root, Headers: selectIt}), 200)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: bound}), 200)

	a := e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/projects/" + id, Key: root, Idem: apitest.Idem()}), 200)
	if a.Str("status") != "archived" || a.Body["archivedAt"] == nil {
		t.Fatalf("archive = %s", a.Raw)
	}
	e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/projects/" + id, Key: root, Idem: apitest.Idem()}), 200)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects/" + id, Key: root}), 200)
	e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/projects/" + id, Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "new"}}), 409, "conflict")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: root, Headers: selectIt}), 403, "project_denied")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: bound}), 403, "project_denied")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects/" + id, Key: bound}), 200)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: root, Idem: apitest.Idem(), Body: map[string]any{"projectId": id}}), 400, "validation_failed")
}
