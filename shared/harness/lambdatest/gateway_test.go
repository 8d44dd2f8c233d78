package lambdatest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/base/routes"
	"platformapi/shared/harness/lambdarie"
)

// TestFunctionsAnswerGatewayEventsAsTheContractSays feeds the events/apigw
// fixtures to the functions API Gateway routes them to and holds each
// answer to the API's rules: status, problem+json code, request id, body.
func TestFunctionsAnswerGatewayEventsAsTheContractSays(t *testing.T) {
	cases := []struct {
		group, fixture string
		status         int
		code           string
		check          func(t *testing.T, r response)
	}{
		{"public", "health.json", http.StatusOK, "", checkHealth},
		{"public", "health-wrong-method.json", http.StatusMethodNotAllowed, "method_not_allowed", checkAllowGet},
		{"public", "openapi.json", http.StatusOK, "", checkOpenAPI},
		{"public", "pricing.json", http.StatusOK, "", checkPricing},
		{"public", "pricing-bad-service.json", http.StatusBadRequest, "validation_failed", nil},
		{"public", "unknown-path.json", http.StatusNotFound, "not_found", nil},
		{"keys", "keys-list-no-key.json", http.StatusUnauthorized, "missing_credentials", nil},
		{"keys", "keys-list-unknown-key.json", http.StatusUnauthorized, "invalid_api_key", nil},
		{"credits", "balance-no-key.json", http.StatusUnauthorized, "missing_credentials", nil},
		{"mcp", "mcp-initialize-no-key.json", http.StatusUnauthorized, "missing_credentials", nil},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			// One function per group, warm after its first event, as on Lambda.
			running := map[string]*lambdarie.Function{}
			for _, c := range cases {
				if running[c.group] == nil {
					running[c.group] = start(t, c.group, b.env(t))
				}
				t.Run(c.group+"/"+strings.TrimSuffix(c.fixture, ".json"), func(t *testing.T) {
					r := invoke(t, running[c.group], fixture(t, c.fixture))
					checkAnswer(t, r, c.status, c.code)
					if c.check != nil {
						c.check(t, r)
					}
				})
			}
		})
	}
}

func checkHealth(t *testing.T, r response) {
	var h struct{ Status, APIVersion string }
	if err := json.Unmarshal(r.body, &h); err != nil || h.Status != "ok" || h.APIVersion != "v1" {
		t.Errorf("health %s (%v), want status ok and apiVersion v1", r.body, err)
	}
}

func checkAllowGet(t *testing.T, r response) {
	if got := r.header("Allow"); got != http.MethodGet {
		t.Errorf("Allow %q, want GET", got)
	}
}

// checkOpenAPI: the public function's document describes every endpoint,
// not only the public group it serves.
func checkOpenAPI(t *testing.T, r response) {
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("openapi %q, want 3.1.x", doc.OpenAPI)
	}
	var missing []string
	for _, rt := range append(append([]routes.Route{}, routes.Public...), routes.Table...) {
		if doc.Paths[rt.Path] == nil && !slices.Contains(missing, rt.Path) {
			missing = append(missing, rt.Path)
		}
	}
	if len(missing) > 0 {
		t.Errorf("document lacks %d of the route table's paths, e.g. %v", len(missing), missing[:min(3, len(missing))])
	}
}

func checkPricing(t *testing.T, r response) {
	var p struct {
		CreditsPerUSD float64 `json:"creditsPerUsd"`
		Services      []struct {
			ServiceID string `json:"serviceId"`
		} `json:"services"`
	}
	if err := json.Unmarshal(r.body, &p); err != nil || p.CreditsPerUSD <= 0 || len(p.Services) == 0 {
		t.Errorf("pricing %s (%v), want creditsPerUsd > 0 and services", r.body, err)
	}
}

// TestEachFunctionServesExactlyItsGroup proves every main is wired to its
// own group and only to it: one of its routes answers (a keyless request
// reaches authentication, 401), while another group's route and the public
// endpoints are not there (404), so API Gateway's routing is the only way in.
func TestEachFunctionServesExactlyItsGroup(t *testing.T) {
	template := fixture(t, "keys-list-no-key.json")
	groups := routes.Groups()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for i, group := range groups {
				t.Run(group, func(t *testing.T) {
					t.Parallel()
					fn := start(t, group, b.env(t))
					other := groups[1+i%(len(groups)-1)] // a different non-public group
					if group == "public" {
						checkAnswer(t, invoke(t, fn, get(template, "/v1/health")), http.StatusOK, "")
					} else {
						checkAnswer(t, invoke(t, fn, get(template, "/v1"+firstGet(t, group))), http.StatusUnauthorized, "missing_credentials")
						checkAnswer(t, invoke(t, fn, get(template, "/v1/health")), http.StatusNotFound, "not_found")
					}
					checkAnswer(t, invoke(t, fn, get(template, "/v1"+firstGet(t, other))), http.StatusNotFound, "not_found")
					if d, ok := fn.InitDuration(); ok {
						t.Logf("init %s", d)
					}
				})
			}
		})
	}
}

// firstGet is the path of the group's first GET route, parameters filled in.
func firstGet(t *testing.T, group string) string {
	t.Helper()
	for _, rt := range routes.Table {
		if rt.Group == group && rt.Method == http.MethodGet {
			return pathParam.ReplaceAllString(rt.Path, "x")
		}
	}
	t.Fatalf("group %s has no GET route", group)
	return ""
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// get turns the template event into a keyless GET of path.
func get(template events.APIGatewayV2HTTPRequest, path string) events.APIGatewayV2HTTPRequest {
	ev := template
	ev.RouteKey, ev.RequestContext.RouteKey = "$default", "$default"
	ev.RawPath, ev.RequestContext.HTTP.Path = path, path
	ev.RequestContext.HTTP.Method = http.MethodGet
	ev.PathParameters = nil
	return ev
}
