// Package httpapi is the HTTP edge of every endpoint group: the route table
// turned into handlers, the request path of DESIGN.md (authenticate, access
// controls, limits, idempotency, handler) enforced in one place, problem+json
// errors, and the OpenAPI 3.1 document generated from the same Go types that
// decode requests. It holds no policy of its own beyond wiring the domain.
package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"platformapi/shared/apierr"
	"platformapi/shared/approvals"
	"platformapi/shared/blob"
	"platformapi/shared/credits"
	"platformapi/shared/credittoken"
	"platformapi/shared/envelope"
	"platformapi/shared/idempotency"
	"platformapi/shared/invoke"
	"platformapi/shared/keys"
	"platformapi/shared/limits"
	"platformapi/shared/projects"
	"platformapi/shared/queue"
	"platformapi/shared/routes"
	"platformapi/shared/store"
	"platformapi/shared/upstream"
	"platformapi/shared/x402"
)

// APIVersion is the major version in the base path.
const APIVersion = "v1"

// Deps are what the server needs from its process.
type Deps struct {
	Store        store.Store
	CreditTokens *credittoken.Signer
	Logger       *slog.Logger
	// Now is the clock; tests move it. Defaults to time.Now.
	Now func() time.Time
	// Groups limits the mounted endpoint groups (a Lambda serves one); nil
	// mounts every group.
	Groups []string
	// RequestTimeout bounds a request's work, and with it how long a dead
	// process's concurrency lease and idempotency claim can linger.
	RequestTimeout time.Duration
	// Counters, when set, holds request-rate windows and concurrency leases
	// (see limits.Counter.WithRequestStore); Store otherwise.
	Counters store.Store
	// Backend names the storage backend in /health.
	Backend string
	// TopUp configures x402 credit purchases; a nil Facilitator or empty
	// PayTo makes the top-up answer 503.
	TopUp       credits.TopUpConfig
	Facilitator x402.Facilitator
	// Services reaches the managed services; a service without an invoker
	// is unavailable (503).
	Services upstream.Router
	// Schemas publishes operations' JSON Schemas in /capabilities, keyed
	// "<serviceId>/<operationId>".
	Schemas map[string]Schema
	// WebhookQueue carries webhook deliveries to the webhook worker.
	WebhookQueue queue.Queue
	// RunsQueue carries durable runs to the run worker.
	RunsQueue queue.Queue
	// Artifacts holds run artifacts.
	Artifacts blob.Bucket
	// Sealer encrypts secrets at rest (webhook signing secrets, connection
	// credentials).
	Sealer envelope.Sealer
	// AllowPrivateWebhooks lets webhook URLs resolve to private, loopback or
	// link-local addresses: a local development switch, never for production.
	AllowPrivateWebhooks bool
}

// Schema is one operation's input and output JSON Schema.
type Schema struct {
	Input, Output json.RawMessage
}

// Server is the API.
type Server struct {
	deps      Deps
	log       *slog.Logger
	now       func() time.Time
	keys      *keys.Repo
	projects  *projects.Repo
	ledger    *credits.Ledger
	topUp     *credits.TopUp
	approvals *approvals.Repo
	limits    *limits.Counter
	idem      *idempotency.Store
	api       huma.API
	openapi   []byte
	docs      []byte
	inner     *http.ServeMux
	handler   http.Handler
	mounted   []routes.Route
	docOnce   sync.Once
	pipeline  *invoke.Pipeline
}

var hookOnce = make(chan struct{}, 1)

// New builds the server and its OpenAPI document.
func New(d Deps) (*Server, error) {
	select {
	case hookOnce <- struct{}{}:
		hookHumaErrors()
	default:
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.RequestTimeout == 0 {
		d.RequestTimeout = 30 * time.Second
	}
	s := &Server{
		deps: d, log: d.Logger, now: d.Now,
		keys:     keys.NewRepo(d.Store, d.Now),
		projects: projects.NewRepo(idempotency.Deferring(d.Store), d.Now),
		ledger:   credits.NewLedger(d.Store, d.Now),
		limits:   limits.NewCounter(d.Store, d.Now, d.RequestTimeout+5*time.Second),
		idem:     idempotency.New(d.Store, d.Now, d.RequestTimeout+5*time.Second),
		inner:    http.NewServeMux(),
	}
	if d.Counters != nil {
		s.limits.WithRequestStore(d.Counters)
	}
	s.topUp = credits.NewTopUp(s.ledger, d.TopUp, d.Facilitator)
	s.approvals = approvals.NewRepo(idempotency.Deferring(d.Store), d.Now)
	s.pipeline = &invoke.Pipeline{Ledger: s.ledger, Limits: s.limits, Approvals: s.approvals, Services: d.Services, Timeout: d.RequestTimeout - 2*time.Second}
	s.api = humago.New(s.inner, humaConfig())
	s.registerPublic()
	implemented := s.registerImplemented()
	for _, rt := range routes.Table {
		if !s.mountedGroup(rt.Group) {
			continue
		}
		s.mounted = append(s.mounted, rt)
		if !implemented[rt.Method+" "+rt.Path] {
			s.registerNotImplemented(rt)
		}
	}
	if d.Groups == nil {
		dropUnusedStatuses(s.api.OpenAPI())
		doc, err := json.Marshal(s.api.OpenAPI())
		if err != nil {
			return nil, fmt.Errorf("httpapi: openapi: %w", err)
		}
		s.openapi, s.docs = doc, renderDocs(s.api.OpenAPI())
	}
	s.handler = s.edge(s.outerMux())
	return s, nil
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

// document returns the OpenAPI document and docs page of the whole API. A
// server mounting only some groups (one Lambda) describes every group all
// the same, built on first use so that cold starts do not pay for it.
func (s *Server) document() (openapi, docs []byte) {
	s.docOnce.Do(func() {
		if s.openapi != nil {
			return
		}
		full := s.deps
		full.Groups = nil
		all, err := New(full)
		if err != nil {
			panic(err)
		}
		s.openapi, s.docs = all.openapi, all.docs
	})
	return s.openapi, s.docs
}

func (s *Server) mountedGroup(g string) bool {
	return s.deps.Groups == nil || slices.Contains(s.deps.Groups, g)
}

// OpenAPI returns the OpenAPI 3.1 document as served at /openapi.json.
func (s *Server) OpenAPI() []byte { doc, _ := s.document(); return doc }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func humaConfig() huma.Config {
	cfg := huma.DefaultConfig("Platform API for Managed Services", "1.0.0")
	cfg.CreateHooks = nil // no $schema links in bodies
	cfg.OpenAPIPath, cfg.DocsPath, cfg.SchemasPath = "", "", ""
	cfg.OpenAPI.Servers = []*huma.Server{{URL: "/" + APIVersion, Description: "Base URL; public endpoints are also served at the root"}}
	cfg.OpenAPI.Info.Description = apiDescription
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "An API key: `Authorization: Bearer psk_…`. Keep it on your server."},
	}
	cfg.Transformers = append(cfg.Transformers, problemTransformer)
	return cfg
}

// operation builds the huma operation of a route from the route table, so
// the document states the route's policy exactly as the middleware enforces it.
func operation(rt routes.Route, public bool) huma.Operation {
	op := huma.Operation{
		OperationID: rt.Operation + suffixFor(rt), Method: rt.Method, Path: rt.Path,
		Summary: rt.Summary, Tags: []string{rt.Group}, MaxBodyBytes: routes.MaxJSONBody,
		Extensions: map[string]any{},
	}
	if rt.Body == routes.BodyRaw || rt.Body == routes.BodyZip {
		op.MaxBodyBytes = routes.MaxRawBody
	}
	if public {
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

// suffixFor keeps operation ids unique where two routes share a limit
// operation (GET /capabilities and GET /capabilities/{serviceId}).
func suffixFor(rt routes.Route) string {
	if rt.Path == "/capabilities/{serviceId}" {
		return ".byService"
	}
	return ""
}

func ptr[T any](v T) *T { return &v }

const idemPattern = `^[A-Za-z0-9:._-]{8,200}$`

var idemRE = regexp.MustCompile(idemPattern)

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// registerNotImplemented answers 501 not_implemented after the full request
// path (authentication and access controls still apply), never a fake success.
func (s *Server) registerNotImplemented(rt routes.Route) {
	op := operation(rt, false)
	op.Description = "**Not implemented yet: answers 501 `not_implemented`** after authentication and the access controls.\n\n" + op.Description
	op.Errors = append(op.Errors, http.StatusNotImplemented)
	for _, m := range pathParamRE.FindAllStringSubmatch(rt.Path, -1) {
		op.Parameters = append(op.Parameters, &huma.Param{Name: m[1], In: "path", Required: true, Schema: &huma.Schema{Type: "string"}})
	}
	huma.Register(s.api, op, func(ctx context.Context, _ *struct{}) (*struct{}, error) {
		return nil, apierr.New(apierr.NotImplemented, "%s %s is not implemented yet.", rt.Method, rt.Path)
	})
}

// outerMux routes /v1 paths through the policy middleware of their route and
// then to huma, which decodes, validates and runs the handler.
func (s *Server) outerMux() http.Handler {
	mux := http.NewServeMux()
	inner := http.StripPrefix("/"+APIVersion, s.inner)
	for _, rt := range routes.Public {
		if !s.mountedGroup(rt.Group) {
			continue
		}
		mux.Handle(rt.Method+" "+rt.Path, s.public(rt, s.inner))
		mux.Handle(rt.Method+" /"+APIVersion+rt.Path, s.public(rt, inner))
	}
	for _, rt := range s.mounted {
		mux.Handle(rt.Method+" /"+APIVersion+rt.Path, s.enforce(rt, inner))
	}
	if s.mountedGroup(routes.MCP.Group) {
		mcpHandler := s.enforce(routes.MCP, s.mcpHandler())
		mux.Handle("POST "+routes.MCP.Path, mcpHandler)
		mux.Handle("POST /"+APIVersion+routes.MCP.Path, mcpHandler)
	}
	mux.HandleFunc("/", s.notFound)
	return mux
}

func (s *Server) public(rt routes.Route, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		infoFrom(r.Context()).operation = rt.Operation
		next.ServeHTTP(w, r)
	})
}

// notFound answers every unrouted request: 405 with Allow when the path
// exists under other methods, else 404, both as problem+json.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	path := r.URL.Path
	candidates := s.mounted
	if s.mountedGroup(routes.MCP.Group) {
		candidates = append(candidates, routes.MCP, routes.Route{Method: routes.MCP.Method, Path: "/" + APIVersion + routes.MCP.Path})
	}
	if s.mountedGroup("public") {
		candidates = append(append([]routes.Route{}, routes.Public...), s.mounted...)
	}
	for _, rt := range candidates {
		if matchPath(rt.Path, strings.TrimPrefix(path, "/"+APIVersion)) && !slices.Contains(allow, rt.Method) {
			if rt.Group == "public" || strings.HasPrefix(path, "/"+APIVersion+"/") {
				allow = append(allow, rt.Method)
			}
		}
	}
	if len(allow) > 0 {
		slices.Sort(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeProblem(w, r, apierr.New(apierr.MethodNotAllowed, "%s is not allowed on %s.", r.Method, path))
		return
	}
	writeProblem(w, r, apierr.New(apierr.NotFound, "No endpoint at %s.", path))
}

func matchPath(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if strings.HasPrefix(ps[i], "{") {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if ps[i] != xs[i] {
			return false
		}
	}
	return true
}
