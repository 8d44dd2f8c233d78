package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/base/apitime"
	"platformapi/shared/base/routes"
	"platformapi/shared/base/strictjson"
)

const apiDescription = `Call your account's managed services with an API key.

Authenticate with ` + "`Authorization: Bearer <API key>`" + `. Every error is ` + "`application/problem+json`" + ` with a stable ` + "`code`" + ` and the ` + "`requestId`" + ` of ` + "`X-Request-Id`" + `.
Lists take ` + "`?limit=`" + ` (1–100, default 20) and ` + "`?cursor=`" + ` and answer ` + "`{\"data\": [...], \"nextCursor\": \"...\" | null}`" + `; ` + "`data`" + ` is always a list, empty on an empty page.
Agents reach the same capabilities through the remote MCP server at ` + "`POST /mcp`" + ` with the same key.`

// checkOrder is stated in every operation's description and in docs/request-pipeline.md.
const checkOrder = "Checks, in order: body size → authentication (the key and every ancestor, read on every request; `notBefore`) → client address (`allowedIps` of the key and every ancestor) → project selection → scope → service access → operation access → `Idempotency-Key` format → content type → limits (`requestsPerMinute`, `maxConcurrent`; a replay counts as a request) → idempotency claim or replay → the operation."

func humaConfig() huma.Config {
	cfg := huma.DefaultConfig("Platform API for Managed Services", "1.0.0")
	cfg.CreateHooks = nil // no $schema links in bodies
	cfg.OpenAPIPath, cfg.DocsPath, cfg.SchemasPath = "", "", ""
	cfg.OpenAPI.Servers = []*huma.Server{{URL: "/" + APIVersion, Description: "Base URL; public endpoints are also served at the root"}}
	cfg.OpenAPI.Info.Description = apiDescription
	// No licence has been granted for the API: LicenseRef- is SPDX's form
	// for a licence that is not on its list, here "all rights reserved".
	cfg.OpenAPI.Info.License = &huma.License{Name: "Proprietary", Identifier: "LicenseRef-Proprietary"}
	cfg.OpenAPI.Info.Contact = &huma.Contact{Name: "Platform API operators"}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "An API key: `Authorization: Bearer psk_…`. Keep it on your server."},
	}
	cfg.Transformers = append(cfg.Transformers, problemTransformer)
	// A json.Number is written as the number it holds (credit amounts such
	// as chargedCredits), not as the string huma takes its kind for.
	cfg.Components.Schemas.RegisterTypeAlias(reflect.TypeFor[json.Number](), reflect.TypeFor[float64]())
	// Every JSON body is decoded strictly: a key repeated, or repeated in
	// another case, is refused, so what an access check or an approval saw
	// is exactly what the operation reads (encoding/json alone would take
	// the last of the case-insensitive matches).
	strict := huma.DefaultJSONFormat
	strict.Unmarshal = strictjson.Unmarshal
	// Every time in a response, however deeply nested, has one fixed
	// width (apitime), so times sort as strings.
	strict.Marshal = apitime.Encode
	cfg.Formats = map[string]huma.Format{"application/json": strict, "json": strict}
	return cfg
}

// dropUnusedStatuses removes the 422 huma documents for every operation with
// input: validation failures are answered 400 validation_failed here.
func dropUnusedStatuses(doc *huma.OpenAPI) {
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op != nil {
				delete(op.Responses, "422")
			}
		}
	}
}

// operation builds the huma operation of a route from the route table, so
// the document states the route's policy exactly as the middleware enforces
// it, with example requests and, for a deprecated route, its sunset.
func operation(rt routes.Route) huma.Operation {
	op := policy(rt)
	markDeprecated(&op, rt)
	op.Extensions["x-codeSamples"] = codeSamples(rt)
	return op
}

// policy is the operation's access, limit and idempotency policy.
func policy(rt routes.Route) huma.Operation {
	op := huma.Operation{
		OperationID: rt.ID, Method: rt.Method, Path: rt.Path,
		// One byte over: huma refuses a body of exactly its limit, and the
		// kernel has already refused one over the route's own.
		Summary: rt.Summary, Tags: []string{rt.Group}, MaxBodyBytes: maxBody(rt) + 1,
		// The kernel has read the body already (enforce, within the
		// request's deadline), so huma reads it from memory. huma's own
		// default, a 5 s read deadline on the connection, would outlive the
		// body and fire on net/http's background read of the idle
		// connection instead, which cancels the request's context: any
		// operation with a body still running after 5 s was stopped.
		BodyReadTimeout: -1,
		Extensions:      map[string]any{},
	}
	if rt.Group == "public" {
		op.Security = []map[string][]string{}
		op.Errors = []int{http.StatusBadRequest}
		return op
	}
	op.Security = []map[string][]string{{"bearer": {}}}
	op.Extensions["x-scopes"] = rt.Scopes
	op.Extensions["x-limit-operation"] = rt.Operation
	op.Extensions["x-idempotent"] = rt.Idem
	var notes []string
	notes = append(notes, "Scope: `"+strings.Join(rt.Scopes, "` and `")+"`.")
	if rt.Service != "" {
		notes = append(notes, "Service access: `"+rt.Service+"`.")
	}
	if rt.ServiceFrom != "" {
		notes = append(notes, "Service access: the service named by `"+strings.SplitN(rt.ServiceFrom, ":", 2)[1]+"`.")
	}
	notes = append(notes, "Limit operation: `"+rt.Operation+"`.")
	if rt.Metered {
		notes = append(notes, "Credit-metered: accepts `creditsPerDay` limits.")
	}
	if rt.CreditToken {
		notes = append(notes, "The first key of a new account is created with `X-Service-Credit-Token` instead of a bearer key.")
		op.Security = append(op.Security, map[string][]string{})
	}
	op.Description = strings.Join(notes, " ") + "\n\n" + checkOrder
	op.Errors = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusTooManyRequests, http.StatusServiceUnavailable}
	if rt.Idem {
		op.Errors = append(op.Errors, http.StatusConflict)
		op.Parameters = append(op.Parameters, &huma.Param{
			Name: "Idempotency-Key", In: "header", Required: true,
			Description: "8–200 characters of letters, digits, `:._-`. Same key and input replays the stored response (`Idempotent-Replayed: true`) for 24 hours; same key with other input is a 409.",
			Schema:      &huma.Schema{Type: "string", MinLength: ptr(8), MaxLength: ptr(200), Pattern: idemPattern},
		})
	}
	if rt.Body != routes.BodyNone {
		op.Errors = append(op.Errors, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	op.Parameters = append(op.Parameters,
		&huma.Param{Name: "X-Service-Project", In: "header", Description: "Selects an active project when using an account-level key; a project-bound key may only name its own.", Schema: &huma.Schema{Type: "string"}},
		&huma.Param{Name: "X-Service-End-User", In: "header", Description: "Acts for one of your app's end users (1–128 characters of letters, digits, `:._@-`).", Schema: &huma.Schema{Type: "string", MaxLength: ptr(128)}},
	)
	return op
}

// maxBody is the body limit of a route: raw uploads get the larger one.
func maxBody(rt routes.Route) int64 {
	if rt.Body == routes.BodyRaw || rt.Body == routes.BodyZip {
		return routes.MaxRawBody
	}
	return routes.MaxJSONBody
}

func ptr[T any](v T) *T { return &v }

const idemPattern = `^[A-Za-z0-9:._-]{8,200}$`

var idemRE = regexp.MustCompile(idemPattern)

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// Describe prepends text to an operation's generated description.
func Describe(text string) func(*huma.Operation) {
	return func(op *huma.Operation) { op.Description = text + "\n\n" + op.Description }
}
