package httpapi_test

import "testing"

func TestProjectLifecycle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		p := e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: idem(), body: map[string]any{"name": "alpha", "metadata": map[string]string{"team": "a"}}}), 201)
		id := p.str("id")
		if p.str("status") != "active" || p.body["archivedAt"] != nil {
			t.Fatalf("created = %s", p.raw)
		}
		u := e.must(e.do(req{method: "PATCH", path: "/v1/projects/" + id, key: root, idem: idem(), body: map[string]any{"description": "first"}}), 200)
		if u.str("name") != "alpha" || u.str("description") != "first" {
			t.Fatalf("updated = %s", u.raw)
		}
		if got := e.must(e.do(req{method: "GET", path: "/v1/projects/" + id, key: root}), 200); got.str("description") != "first" {
			t.Fatalf("read after update = %s", got.raw)
		}
		e.must(e.do(req{method: "PATCH", path: "/v1/projects/" + id, key: root, idem: idem(), body: map[string]any{"name": ""}}), 400, "validation_failed")
		e.must(e.do(req{method: "GET", path: "/v1/projects/prj_nope", key: root}), 404, "not_found")
		other, _ := e.rootKey(1, nil)
		e.must(e.do(req{method: "GET", path: "/v1/projects/" + id, key: other}), 404, "not_found")
		e.must(e.do(req{method: "PATCH", path: "/v1/projects/" + id, key: other, idem: idem(), body: map[string]any{"name": "x"}}), 404, "not_found")
	})
}

// Archiving freezes a project: it stays readable, refuses changes, cannot be
// selected, and keys bound to it can read it and nothing else.
func TestArchivedProjectsAreReadOnlyAndStopTheirKeys(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	id := e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: idem(), body: map[string]any{"name": "old"}}), 201).str("id")
	bound, _ := e.child(root, map[string]any{"projectId": id})
	selectIt := map[string]string{"X-Service-Project": id}
	e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: root, headers: selectIt}), 200)
	e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: bound}), 200)

	a := e.must(e.do(req{method: "DELETE", path: "/v1/projects/" + id, key: root, idem: idem()}), 200)
	if a.str("status") != "archived" || a.body["archivedAt"] == nil {
		t.Fatalf("archive = %s", a.raw)
	}
	e.must(e.do(req{method: "DELETE", path: "/v1/projects/" + id, key: root, idem: idem()}), 200)
	e.must(e.do(req{method: "GET", path: "/v1/projects/" + id, key: root}), 200)
	e.must(e.do(req{method: "PATCH", path: "/v1/projects/" + id, key: root, idem: idem(), body: map[string]any{"name": "new"}}), 409, "conflict")
	e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: root, headers: selectIt}), 403, "project_denied")
	e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: bound}), 403, "project_denied")
	e.must(e.do(req{method: "GET", path: "/v1/projects/" + id, key: bound}), 200)
	e.must(e.do(req{method: "POST", path: "/v1/api-keys", key: root, idem: idem(), body: map[string]any{"projectId": id}}), 400, "validation_failed")
}
