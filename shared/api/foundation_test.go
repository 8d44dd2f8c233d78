package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/base/routes"
	"platformapi/shared/harness/apitest"
	"platformapi/shared/platform"
)

func TestPublicEndpointsAnswerAtRootAndUnderV1(t *testing.T) {
	e := apitest.New(t)
	for _, prefix := range []string{"", "/v1"} {
		h := e.Must(e.Do(apitest.Req{Method: "GET", Path: prefix + "/health"}), 200)
		if h.Str("status") != "ok" || h.Str("apiVersion") != "v1" {
			t.Fatalf("health = %s", h.Raw)
		}
		o := e.Must(e.Do(apitest.Req{Method: "GET", Path: prefix + "/openapi.json"}), 200)
		if !strings.HasPrefix(o.Str("openapi"), "3.1") {
			t.Fatalf("openapi version = %q", o.Str("openapi"))
		}
		p := e.Must(e.Do(apitest.Req{Method: "GET", Path: prefix + "/pricing"}), 200)
		if p.Body["creditsPerUsd"].(float64) <= 0 || len(p.Body["services"].([]any)) != 9 {
			t.Fatalf("pricing = %s", p.Raw)
		}
		d := e.Must(e.Do(apitest.Req{Method: "GET", Path: prefix + "/docs"}), 200)
		if !strings.Contains(d.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(d.Raw), `spec-url="openapi.json"`) {
			t.Fatalf("docs page does not render the document: %s", d.Raw)
		}
	}
}

func TestPricingFiltersByTheSixSpecServicesOnly(t *testing.T) {
	e := apitest.New(t)
	for _, svc := range []string{"platform-api", "managed-wallets", "managed-trading", "universal-swaps", "managed-agents", "managed-workflows"} {
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/pricing?service=" + svc}), 200)
		list := r.Body["services"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["serviceId"] != svc {
			t.Fatalf("?service=%s gave %s", svc, r.Raw)
		}
	}
	for _, bad := range []string{"cloud-superbrain", "core-database", "nope"} {
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/pricing?service=" + bad}), 400, "validation_failed")
	}
}

func TestUnknownPathIsProblem404(t *testing.T) {
	e := apitest.New(t)
	for _, p := range []string{"/v1/nope", "/nope", "/api-keys", "/v1/api-keys/x/y"} {
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: p}), 404, "not_found")
		if r.Header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s: content type %q", p, r.Header.Get("Content-Type"))
		}
	}
}

func TestWrongMethodIsProblem405WithAllow(t *testing.T) {
	e := apitest.New(t)
	r := e.Must(e.Do(apitest.Req{Method: "PUT", Path: "/v1/projects"}), 405, "method_not_allowed")
	if r.Header.Get("Allow") != "GET, POST" {
		t.Fatalf("Allow = %q", r.Header.Get("Allow"))
	}
	e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/health"}), 405, "method_not_allowed")
}

func TestProblemsCarryTheContractFields(t *testing.T) {
	e := apitest.New(t)
	r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance"}), 401, "missing_credentials")
	for _, f := range []string{"type", "title", "code", "detail", "requestId"} {
		if r.Str(f) == "" {
			t.Errorf("problem lacks %s: %s", f, r.Raw)
		}
	}
	if r.Body["status"].(float64) != 401 {
		t.Errorf("status field = %v", r.Body["status"])
	}
	if r.Str("requestId") != r.Header.Get("X-Request-Id") {
		t.Errorf("requestId %q != X-Request-Id %q", r.Str("requestId"), r.Header.Get("X-Request-Id"))
	}
}

func TestEveryResponseCarriesARequestID(t *testing.T) {
	e := apitest.New(t)
	secret, _ := e.RootKey(1, nil)
	seen := map[string]bool{}
	for _, r := range []apitest.Req{
		{Method: "GET", Path: "/health"}, {Method: "GET", Path: "/v1/nope"}, {Method: "GET", Path: "/v1/credits/balance"},
		{Method: "GET", Path: "/v1/credits/balance", Key: secret}, {Method: "GET", Path: "/v1/wallets", Key: secret},
	} {
		id := e.Do(r).Header.Get("X-Request-Id")
		if id == "" || seen[id] {
			t.Fatalf("%s %s: X-Request-Id %q missing or reused", r.Method, r.Path, id)
		}
		seen[id] = true
	}
}

func TestMissingOrUnknownKeyIs401(t *testing.T) {
	e := apitest.New(t)
	secret, _ := e.RootKey(1, nil)
	forged := secret[:len(secret)-4] + "AAAA"
	for name, tc := range map[string]struct {
		authz string
		code  string
	}{
		"no header":      {"", "missing_credentials"},
		"not bearer":     {"Basic abc", "invalid_api_key"},
		"unknown secret": {"Bearer psk_nothing", "invalid_api_key"},
		"forged secret":  {"Bearer " + forged, "invalid_api_key"},
		"unknown key id": {"Bearer psk_key_01M8142SJ4P3055BQSZ1J8BYQY_" + strings.Repeat("A", 43), "invalid_api_key"},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Headers: map[string]string{"Authorization": tc.authz}})
			e.Must(r, 401, tc.code)
			if r.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestOversizedBodyIs413(t *testing.T) {
	e := apitest.New(t)
	secret, _ := e.RootKey(1, nil)
	big := []byte(`{"name":"` + strings.Repeat("a", routes.MaxJSONBody) + `"}`)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: secret, Idem: apitest.Idem(), Body: big,
		Headers: map[string]string{"Content-Type": "application/json"}}), 413, "payload_too_large")
}

func TestWrongContentTypeIs415(t *testing.T) {
	e := apitest.New(t)
	secret, _ := e.RootKey(1, nil)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: secret, Idem: apitest.Idem(), Body: []byte(`name=x`),
		Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}), 415, "unsupported_media_type")
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: secret, Idem: apitest.Idem(), Body: []byte(`{"name":"x"}`)}), 415, "unsupported_media_type")
}

func TestMalformedJSONIs400(t *testing.T) {
	e := apitest.New(t)
	secret, _ := e.RootKey(1, nil)
	r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: secret, Idem: apitest.Idem(), Body: []byte(`{"name":`),
		Headers: map[string]string{"Content-Type": "application/json"}}), 400, "validation_failed")
	if r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("content type %q", r.Header.Get("Content-Type"))
	}
	r = e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: secret, Idem: apitest.Idem(), Body: map[string]any{"name": "x", "color": "red"}}), 400, "validation_failed")
	if len(r.Body["errors"].([]any)) == 0 {
		t.Fatalf("no field errors: %s", r.Raw)
	}
}

func TestIdemEndpointsRequireAWellFormedIdempotencyKey(t *testing.T) {
	e := apitest.New(t)
	secret, _ := e.RootKey(1, nil)
	body := map[string]any{"name": "p"}
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: secret, Body: body}), 400, "idempotency_key_required")
	for _, bad := range []string{"short", strings.Repeat("a", 201), "has space in it", "bad/slash-key"} {
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: secret, Idem: bad, Body: body}), 400, "idempotency_key_invalid")
	}
	for _, good := range []string{"abcdefgh", strings.Repeat("a", 200), "A1:b2.c3_d4-e5"} {
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: secret, Idem: good, Body: body}), 201)
	}
	// Every Idem endpoint enforces it, built or not.
	for _, rt := range routes.Table {
		if !rt.Idem || rt.CreditToken {
			continue
		}
		path := strings.NewReplacer("{", "x", "}", "").Replace(rt.Path)
		r := e.Do(apitest.Req{Method: rt.Method, Path: "/v1" + path, Key: secret})
		if r.Status == 400 && r.Code() == "idempotency_key_required" || r.Status == 404 {
			continue
		}
		t.Errorf("%s %s without Idempotency-Key: %d %s", rt.Method, rt.Path, r.Status, r.Code())
	}
}

func TestUnbuiltEndpointsAnswer501AfterAuthentication(t *testing.T) {
	// Every promised route is built now: a served route no group registered is
	// a test-only one.
	unbuilt := []routes.Route{
		{Method: http.MethodGet, Path: "/test/unbuilt", Group: "test", Operation: "test.unbuilt.list", ID: "test.unbuilt.list",
			Scopes: []string{"projects:read"}, Body: routes.BodyNone, Summary: "Not built yet"},
		{Method: http.MethodPost, Path: "/test/unbuilt", Group: "test", Operation: "test.unbuilt.create", ID: "test.unbuilt.create",
			Scopes: []string{"projects:write"}, Idem: true, Body: routes.BodyJSON, Summary: "Not built yet"},
	}
	e := apitest.New(t, apitest.Options{Routes: unbuilt})
	secret, _ := e.RootKey(1, nil)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/test/unbuilt"}), 401, "missing_credentials")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/test/unbuilt", Key: secret}), 501, "not_implemented")
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/test/unbuilt", Key: secret, Idem: apitest.Idem(), Body: map[string]any{}}), 501, "not_implemented")
}

// specEndpoints is every endpoint the API promises, GET /files/{fileId}/content,
// POST /api-keys/{id}/roll and GET /credits/ledger included, copied
// independently of the route table.
const specEndpoints = `GET /api-keys;POST /api-keys;DELETE /api-keys/{id};POST /api-keys/{id}/roll;GET /services;GET /capabilities;GET /capabilities/{serviceId};GET /actions;POST /services/{serviceId}/invoke;GET /credits/balance;GET /credits/ledger;POST /credits/x402/top-up;GET /projects;POST /projects;GET /projects/{projectId};PATCH /projects/{projectId};DELETE /projects/{projectId};GET /usage;GET /audit-events;GET /files;POST /files;GET /files/{fileId};GET /files/{fileId}/content;DELETE /files/{fileId};GET /connections;POST /connections;GET /connections/{connectionId};PATCH /connections/{connectionId};DELETE /connections/{connectionId};GET /databases/account;POST /databases/account;DELETE /databases/account;POST /databases/query;POST /databases/actions;POST /databases/transfers;PUT /databases/transfers/{transferId}/parts/{partNumber};POST /databases/transfers/{transferId}/complete;GET /databases/transfers/{transferId}/archive;GET /databases/transfers/{transferId};DELETE /databases/transfers/{transferId};GET /wallets;POST /wallets;GET /wallets/{walletId};GET /wallets/{walletId}/balances;PATCH /wallets/{walletId}/policy;POST /wallets/{walletId}/transactions/quote;POST /wallets/{walletId}/transactions;GET /wallets/{walletId}/transactions;GET /wallets/{walletId}/transactions/{transactionId};POST /wallets/{walletId}/signatures/quote;POST /wallets/{walletId}/signatures;POST /trading/quotes;POST /trading/orders;GET /trading/orders;GET /trading/orders/{orderId};GET /trading/positions;GET /swaps/tokens;POST /swaps/quote;POST /swaps;GET /swaps;GET /swaps/{swapId};POST /swaps/prepare;GET /swaps/routes/{routeId};GET /runs;POST /runs;GET /runs/{runId};POST /runs/{runId}/cancel;GET /approvals;POST /approvals/service-actions;POST /approvals/{approvalId};GET /artifacts;GET /artifacts/{artifactId}/content;GET /webhooks;POST /webhooks;PATCH /webhooks/{webhookId};POST /webhooks/{webhookId}/rotate-secret;DELETE /webhooks/{webhookId};GET /webhook-deliveries;POST /webhook-deliveries/{deliveryId}/replay`

func TestOpenAPIDocumentsEverySpecEndpointWithItsPolicy(t *testing.T) {
	e := apitest.New(t)
	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			SecuritySchemes map[string]any `json:"securitySchemes"`
		} `json:"components"`
	}
	raw := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/openapi.json"}), 200).Raw
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"422"`) {
		t.Error("the document promises 422, which the API never answers (validation is 400)")
	}
	if doc.Components.SecuritySchemes["bearer"] == nil {
		t.Fatal("no bearer security scheme")
	}
	idemRoutes := map[string]bool{}
	for _, rt := range routes.Table {
		idemRoutes[rt.Method+" "+rt.Path] = rt.Idem
	}
	for _, ep := range strings.Split(specEndpoints, ";") {
		method, path, _ := strings.Cut(ep, " ")
		raw, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("%s missing from the OpenAPI document", ep)
			continue
		}
		var op struct {
			Parameters []struct {
				Name, In string
				Required bool
			}
			Responses map[string]any
			Security  []map[string]any
		}
		_ = json.Unmarshal(raw, &op)
		hasIdem := false
		for _, p := range op.Parameters {
			if p.Name == "Idempotency-Key" && p.In == "header" && p.Required {
				hasIdem = true
			}
		}
		if hasIdem != idemRoutes[ep] {
			t.Errorf("%s: Idempotency-Key documented=%v, route table says %v", ep, hasIdem, idemRoutes[ep])
		}
		for _, status := range []string{"401", "403"} {
			if op.Responses[status] == nil {
				t.Errorf("%s: no %s response documented", ep, status)
			}
		}
		if len(op.Security) == 0 {
			t.Errorf("%s: no security requirement", ep)
		}
	}
	if n := len(strings.Split(specEndpoints, ";")); n != len(routes.Table) {
		t.Errorf("route table has %d endpoints, the API promises %d", len(routes.Table), n)
	}
}

// documentOf is the whole platform's OpenAPI document as JSON and as huma
// built it.
func documentOf(t *testing.T) (map[string]any, *huma.OpenAPI) {
	t.Helper()
	raw, err := platform.Document()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	k, err := platform.Empty()
	if err != nil {
		t.Fatal(err)
	}
	return doc, k.OpenAPI()
}

// TestListsAreNeverNullable: the server writes every list as [] when
// empty, so the document must not make clients null-check them; the key
// allowlists, which are null when unbounded, are the only exception.
func TestListsAreNeverNullable(t *testing.T) {
	doc, _ := documentOf(t)
	nullableOnPurpose := map[string]bool{"allowedIps": true, "allowedOperations": true, "allowedServices": true}
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if types, ok := v["type"].([]any); ok && slices.Contains(types, "array") && slices.Contains(types, "null") {
				if name := at[strings.LastIndex(at, "/")+1:]; !nullableOnPurpose[name] {
					t.Errorf("%s is a nullable array", at)
				}
			}
			for k, x := range v {
				walk(at+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(at+"/"+strconv.Itoa(i), x)
			}
		}
	}
	walk("#", doc)
}

// TestEveryOperationIsInADeclaredSection: the reference groups operations
// by tags that the document declares, each with a description.
func TestEveryOperationIsInADeclaredSection(t *testing.T) {
	_, doc := documentOf(t)
	declared := map[string]bool{}
	for _, tag := range doc.Tags {
		if tag.Description == "" {
			t.Errorf("tag %q has no description", tag.Name)
		}
		declared[tag.Name] = true
	}
	used := map[string]bool{}
	for path, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			if len(op.Tags) != 1 || !declared[op.Tags[0]] {
				t.Errorf("%s %s: tags %v, want one declared section", op.Method, path, op.Tags)
				continue
			}
			used[op.Tags[0]] = true
		}
	}
	for name := range declared {
		if !used[name] {
			t.Errorf("tag %q is declared but has no operation", name)
		}
	}
	for path, want := range map[string]string{"/usage": "Usage", "/audit-events": "Audit events", "/mcp": "MCP"} {
		if op := doc.Paths[path]; op == nil || op.Get == nil && op.Post == nil {
			t.Errorf("%s is not documented", path)
		} else if got := append(opTags(op.Get), opTags(op.Post)...); !slices.Equal(got, []string{want}) {
			t.Errorf("%s is in %v, want %s", path, got, want)
		}
	}
}

func opTags(op *huma.Operation) []string {
	if op == nil {
		return nil
	}
	return op.Tags
}

// TestTheDocumentNamesItsLicenseAndContact, and says nothing stale.
func TestTheDocumentNamesItsLicenseAndContact(t *testing.T) {
	_, doc := documentOf(t)
	if doc.Info.License == nil || doc.Info.License.Name == "" || doc.Info.License.Identifier == "" && doc.Info.License.URL == "" {
		t.Errorf("info.license = %+v", doc.Info.License)
	}
	if doc.Info.Contact == nil || doc.Info.Contact.Name == "" {
		t.Errorf("info.contact = %+v", doc.Info.Contact)
	}
	if strings.Contains(doc.Info.Description, "501") {
		t.Errorf("the description still speaks of unbuilt endpoints: %s", doc.Info.Description)
	}
}

// TestEveryBodySchemaHasARealExample: every request and JSON response
// schema carries an example captured from the test suite, and it matches
// the schema (a mismatch means the document and the server disagree).
func TestEveryBodySchemaHasARealExample(t *testing.T) {
	_, doc := documentOf(t)
	reg := doc.Components.Schemas
	check := func(where string, mt *huma.MediaType, mode huma.ValidateMode) {
		if mt == nil || mt.Schema == nil || mt.Schema.Ref == "" {
			return
		}
		s := reg.SchemaFromRef(mt.Schema.Ref)
		if len(s.Examples) == 0 {
			t.Errorf("%s: schema %s has no example", where, mt.Schema.Ref)
			return
		}
		res := &huma.ValidateResult{}
		huma.Validate(reg, s, huma.NewPathBuffer([]byte{}, 0), mode, s.Examples[0], res)
		for _, err := range res.Errors {
			t.Errorf("%s: the example of %s does not match it: %v", where, mt.Schema.Ref, err)
		}
		if p := placeholder("", s.Examples[0]); p != "" {
			t.Errorf("%s: the example of %s has a placeholder at %s", where, mt.Schema.Ref, p)
		}
	}
	for path, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			where := op.Method + " " + path
			if op.RequestBody != nil {
				check(where, op.RequestBody.Content["application/json"], huma.ModeWriteToServer)
			}
			for status, r := range op.Responses {
				for ct, mt := range r.Content {
					if strings.Contains(ct, "json") {
						check(where+" "+status, mt, huma.ModeReadFromServer)
					}
				}
			}
		}
	}
}

// placeholder is where v holds what a renderer makes up for a schema
// without example ("string" for a string, a 2019 date for a time), or "".
func placeholder(at string, v any) string {
	switch v := v.(type) {
	case string:
		if v == "string" && !strings.HasSuffix(at, ".type") || strings.HasPrefix(v, "2019-") {
			return at
		}
	case map[string]any:
		for k, x := range v {
			if p := placeholder(at+"."+k, x); p != "" {
				return p
			}
		}
	case []any:
		for i, x := range v {
			if p := placeholder(at+"["+strconv.Itoa(i)+"]", x); p != "" {
				return p
			}
		}
	}
	return ""
}
