package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"platformapi/shared/api"
	"platformapi/shared/base/routes"
	"platformapi/shared/harness/apitest"
)

var (
	deprecatedSince  = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	deprecatedSunset = time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)
)

// oldCreate is a test-only deprecated operation replaced by projects.create.
var oldCreate = routes.Route{
	Method: http.MethodPost, Path: "/test/old-projects", Group: "test", Operation: "test.oldProjects.create", ID: "test.oldProjects.create",
	Scopes: []string{"projects:write"}, Idem: true, Body: routes.BodyJSON, Summary: "Create a project the old way",
}.Deprecate(deprecatedSince, deprecatedSunset, "projects.create")

type oldCreateInput struct {
	Body struct {
		Name string `json:"name"`
	}
}

func withDeprecatedRoute() apitest.Options {
	return apitest.Options{Routes: []routes.Route{oldCreate}, Register: func(k *api.Kernel) {
		api.Register(k, oldCreate.ID, http.StatusCreated, func(ctx context.Context, in *oldCreateInput) (*api.Body[map[string]string], error) {
			return api.Reply(map[string]string{"name": in.Body.Name}), nil
		})
	}}
}

func TestADeprecatedOperationAnnouncesItsSunsetAndSuccessorOnEveryResponse(t *testing.T) {
	e := apitest.New(t, withDeprecatedRoute())
	root, _ := e.RootKey(100, nil)
	idem := apitest.Idem()
	req := apitest.Req{Method: "POST", Path: "/v1/test/old-projects", Key: root, Idem: idem, Body: map[string]any{"name": "a"}}
	first := e.Must(e.Do(req), 201)
	replay := e.Must(e.Do(req), 201)
	if replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("second request was not a replay: %v", replay.Header)
	}
	refused := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/test/old-projects", Idem: apitest.Idem(), Body: map[string]any{"name": "a"}}), 401)
	for name, r := range map[string]*apitest.Resp{"first": first, "replay": replay, "refused": refused} {
		if got, want := r.Header.Get("Deprecation"), "@"+strconv.FormatInt(deprecatedSince.Unix(), 10); got != want {
			t.Errorf("%s: Deprecation = %q, want %q", name, got, want)
		}
		if got, want := r.Header.Get("Sunset"), "Mon, 01 Feb 2027 00:00:00 GMT"; got != want {
			t.Errorf("%s: Sunset = %q, want %q", name, got, want)
		}
		if links := strings.Join(r.Header.Values("Link"), ", "); !strings.Contains(links, `</v1/projects>; rel="successor-version"`) {
			t.Errorf("%s: Link = %q, want the successor-version /v1/projects", name, links)
		}
	}
	other := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: root}), 200)
	if other.Header.Get("Deprecation") != "" || other.Header.Get("Sunset") != "" {
		t.Fatalf("an operation that is not deprecated announces a deprecation: %v", other.Header)
	}
}

func TestADeprecatedOperationIsFlaggedInTheDocumentWithItsDates(t *testing.T) {
	e := apitest.New(t, withDeprecatedRoute())
	op := e.Kernel.OpenAPI().Paths["/test/old-projects"].Post
	if op == nil || !op.Deprecated {
		t.Fatalf("the deprecated operation is not deprecated in the document: %+v", op)
	}
	for _, want := range []string{"2026-11-01", "2027-02-01", "`POST /v1/projects`"} {
		if !strings.Contains(op.Description, want) {
			t.Errorf("description lacks %q: %s", want, op.Description)
		}
	}
	if op.Extensions["x-sunset"] != "2027-02-01" {
		t.Errorf("x-sunset = %v", op.Extensions["x-sunset"])
	}
	if e.Kernel.OpenAPI().Paths["/projects"].Post.Deprecated {
		t.Error("projects.create is flagged deprecated")
	}
}

func TestTheKernelRefusesADeprecationThatBreaksTheNoticePeriod(t *testing.T) {
	for name, rt := range map[string]routes.Route{
		"29 days":      oldCreate.Deprecate(deprecatedSince, deprecatedSince.Add(29*24*time.Hour), "projects.create"),
		"no successor": oldCreate.Deprecate(deprecatedSince, deprecatedSunset, ""),
		"unknown id":   oldCreate.Deprecate(deprecatedSince, deprecatedSunset, "projects.make"),
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("the kernel accepted the deprecation")
				}
			}()
			api.New(api.Config{ExtraRoutes: []routes.Route{rt}})
		})
	}
	api.New(api.Config{ExtraRoutes: []routes.Route{oldCreate}}) // 92 days, a successor: fine
}
