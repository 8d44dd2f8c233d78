// Package api is the kernel of the HTTP API: the request path of
// docs/request-pipeline.md (authenticate, the four access controls, limits,
// idempotency), problem+json errors, request logging, paging and the
// assembly of the OpenAPI document.
// It holds no endpoint group's handlers: each group is a package of its own
// (keysapi, projectsapi, ...) that adds its operations with Register by
// their route-table id, so a Lambda links only the group it serves.
package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/routes"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/domain/limits"
	"platformapi/shared/domain/pseudonym"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/projects"
)

// APIVersion is the major version in the base path.
const APIVersion = "v1"

// Config is what the kernel needs from its process.
type Config struct {
	Store store.Store
	// SharedReads reads Store's items uncopied for authentication, where
	// the process's store offers it (the embedded store); nil reads copies.
	SharedReads store.SharedReader
	// LocalLimits is set only by a process that serves its storage alone
	// (the embedded server, whose store file is locked to it). Request-rate
	// windows and concurrency leases are then kept in this process's memory
	// (limits.Counter.WithLocalRequests): exact, with no storage write per
	// request, and started afresh on restart. Otherwise they are items of
	// Store, as every Lambda needs.
	LocalLimits bool
	// CreditTokens redeems first-key credit tokens; nil where this process
	// cannot (every function but keys).
	CreditTokens *credittoken.Signer
	Logger       *slog.Logger
	// Now is the clock; tests move it. Defaults to time.Now.
	Now func() time.Time
	// Groups are the endpoint groups this process serves (a Lambda serves
	// one); nil serves every group. A served route whose group registered
	// no handler answers 501 not_implemented.
	Groups []string
	// RequestTimeout bounds a request's work, and with it how long a dead
	// process's concurrency lease and idempotency claim can linger.
	RequestTimeout time.Duration
	// Events publishes webhook events; nil publishes none.
	Events Publisher
	// Sealer seals the stored idempotent responses of routes that answer a
	// secret (routes.Route.Secret); without one those routes answer 503.
	// It also keeps each account's end-user pseudonym key; without one the
	// pseudonymous tier logs no end user at all. And it keys the stored
	// idempotency fingerprints (without one they are unkeyed digests).
	Sealer envelope.Sealer
	// Audit records one event per authenticated request (see audit.go);
	// nil records none.
	Audit AuditRecorder
	// ClientIP is the client's address, which keys' allowedIps are checked
	// against: the socket's (SocketAddr) by default; behind API Gateway the
	// Lambda edge reads the request context. Never X-Forwarded-For, which
	// the client writes.
	ClientIP func(*http.Request) netip.Addr
	// NoMetrics leaves the CloudWatch metrics (the Embedded Metric
	// Format's _aws block and its values) off the access line: only
	// CloudWatch Logs reads them, on Lambda. The zero value writes them.
	NoMetrics bool
	// ExtraRoutes are served on top of the route table, by groups that
	// register them like any other. Only tests set it (a deprecated test
	// route), so the production table holds nothing made up.
	ExtraRoutes []routes.Route
}

// Publisher hands an event to the webhooks of an account and project.
type Publisher interface {
	Publish(ctx context.Context, accountID, projectID, event string, data any) error
}

// Kernel is the API's request path, onto which groups register operations.
type Kernel struct {
	cfg Config
	// sections are the reference's, from every group it serves.
	sections []Section
	log      *slog.Logger
	now      func() time.Time
	keys     *keys.Repo
	projects *projects.Repo
	limits   *limits.Counter
	idem     *idempotency.Store
	// pseudonyms keys the pseudonymous tier's end users; nil without a
	// Sealer.
	pseudonyms *pseudonym.Keeper
	api        huma.API
	inner      *http.ServeMux
	// registered holds the ids of routes with a huma handler; raw holds
	// those served by a plain http.Handler (MCP).
	registered map[string]bool
	raw        map[string]http.Handler
	// pages are the public group's browser pages outside the route table
	// (see Page), by pattern.
	pages   []page
	build   sync.Once
	handler http.Handler
}

// New builds a kernel on which groups then register their operations.
func New(cfg Config) *Kernel {
	hookHumaErrors()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = SocketAddr
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	k := &Kernel{
		cfg: cfg, log: cfg.Logger, now: cfg.Now,
		keys:       keys.NewAuthRepo(cfg.Store, cfg.SharedReads, cfg.Now),
		projects:   projects.NewRepo(cfg.Store, cfg.Now),
		limits:     limits.NewCounter(cfg.Store, cfg.Now, cfg.RequestTimeout+5*time.Second),
		idem:       idempotency.New(cfg.Store, cfg.Sealer, cfg.Now, cfg.RequestTimeout+5*time.Second),
		inner:      http.NewServeMux(),
		registered: map[string]bool{},
		raw:        map[string]http.Handler{},
	}
	if cfg.LocalLimits {
		k.limits.WithLocalRequests()
	}
	for _, rt := range k.all() {
		if rt.Deprecated != nil {
			if err := rt.Deprecated.Check(); err != nil {
				panic(fmt.Sprintf("api: route %s: %v", rt.ID, err))
			}
		}
	}
	if cfg.Sealer != nil {
		k.pseudonyms = pseudonym.New(cfg.Store, cfg.Sealer)
	}
	k.api = humago.New(k.inner, humaConfig())
	return k
}

// Now is the kernel's clock.
func (k *Kernel) Now() time.Time { return k.now() }

// Limits is the limit counter, for operations that admit further requests
// of their own (an MCP tool call is one invoke).
func (k *Kernel) Limits() *limits.Counter { return k.limits }

// RequestTimeout is the deadline of every request.
func (k *Kernel) RequestTimeout() time.Duration { return k.cfg.RequestTimeout }

// Serves reports whether this process serves the group.
func (k *Kernel) Serves(group string) bool {
	return k.cfg.Groups == nil || slices.Contains(k.cfg.Groups, group)
}

// route finds a route by id; a group naming a route that does not exist is
// a programming error caught by every test that builds the group.
func (k *Kernel) route(id string) routes.Route {
	for _, rt := range k.cfg.ExtraRoutes {
		if rt.ID == id {
			return rt
		}
	}
	rt, ok := routes.ByID(id)
	if !ok {
		panic("api: no route " + id)
	}
	return rt
}

// all is every route this kernel knows: the table's and the extra ones.
func (k *Kernel) all() []routes.Route {
	out := append([]routes.Route{routes.MCP}, routes.Public...)
	out = append(out, routes.Table...)
	return append(out, k.cfg.ExtraRoutes...)
}

// Register adds the operation of route id, documented from the route table
// and answering status on success. It does nothing when this process does
// not serve the route's group. edit may refine the generated documentation
// (a raw response, a longer description).
func Register[I, O any](k *Kernel, id string, status int, h func(context.Context, *I) (*O, error), edit ...func(*huma.Operation)) {
	rt := k.route(id)
	if !k.Serves(rt.Group) {
		return
	}
	op := operation(rt)
	op.DefaultStatus = status
	for _, e := range edit {
		e(&op)
	}
	huma.Register(k.api, op, h)
	k.registered[id] = true
}

// Handle serves route id with a plain handler behind the same request path
// (the MCP transport, which is no huma operation).
func (k *Kernel) Handle(id string, h http.Handler) {
	if rt := k.route(id); k.Serves(rt.Group) {
		k.raw[id] = h
	}
}

type page struct {
	pattern, name string
	h             http.Handler
}

// Page serves a browser page of the public group (GET pattern, at the root
// and under /v1) that is no operation of the API: the route table, the
// OpenAPI document and the SDKs leave it out, as they should a page rather
// than a call (docs/console.md). name stands for the operation on its
// access-log line and in its metrics. It does nothing where this process
// does not serve the public group.
func (k *Kernel) Page(pattern, name string, h http.Handler) {
	if k.Serves("public") {
		k.pages = append(k.pages, page{pattern: pattern, name: name, h: h})
	}
}

// serve names the page on the access line; a path with a parameter is
// still redacted there, as any other request's.
func (p page) serve() http.Handler {
	literal := !strings.Contains(p.pattern, "{")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.group, info.operation, info.literalPath = "public", p.name, literal
		p.h.ServeHTTP(w, r)
	})
}

// served lists every route of the groups this process serves.
func (k *Kernel) served() []routes.Route {
	var out []routes.Route
	for _, rt := range k.all() {
		if k.Serves(rt.Group) {
			out = append(out, rt)
		}
	}
	return out
}

// Handler completes the API once every group has registered: routes
// without a handler answer 501, and the request path wraps them all. It is
// built on first call; later registrations are not seen.
func (k *Kernel) Handler() http.Handler {
	k.build.Do(func() {
		for _, rt := range k.served() {
			if !k.registered[rt.ID] && k.raw[rt.ID] == nil && rt.Group != "public" && rt.Group != routes.MCP.Group {
				k.registerNotImplemented(rt)
			}
		}
		finishDocument(k.api.OpenAPI(), k.raw[routes.MCP.ID] != nil, k.sections)
		k.handler = k.edge(k.outerMux())
	})
	return k.handler
}

func (k *Kernel) ServeHTTP(w http.ResponseWriter, r *http.Request) { k.Handler().ServeHTTP(w, r) }

// OpenAPI is the document of the operations this process serves.
func (k *Kernel) OpenAPI() *huma.OpenAPI {
	k.Handler()
	return k.api.OpenAPI()
}

// registerNotImplemented answers 501 not_implemented after the full request
// path (authentication and access controls still apply), never a fake success.
func (k *Kernel) registerNotImplemented(rt routes.Route) {
	op := operation(rt)
	op.Description = "**Not implemented yet: answers 501 `not_implemented`** after authentication and the access controls.\n\n" + op.Description
	op.Errors = append(op.Errors, http.StatusNotImplemented)
	for _, m := range pathParamRE.FindAllStringSubmatch(rt.Path, -1) {
		op.Parameters = append(op.Parameters, &huma.Param{Name: m[1], In: "path", Required: true, Schema: &huma.Schema{Type: "string"}})
	}
	huma.Register(k.api, op, func(ctx context.Context, _ *struct{}) (*struct{}, error) {
		return nil, apierr.New(apierr.NotImplemented, "%s %s is not implemented yet.", rt.Method, rt.Path)
	})
}

// outerMux routes each path through the policy of its route and then to
// huma (which decodes, validates and runs the handler) or to a raw handler.
// Public routes and MCP answer at the root and under /v1.
func (k *Kernel) outerMux() http.Handler {
	mux := http.NewServeMux()
	prefix := "/" + APIVersion
	inner := stripVersion(prefix, k.inner)
	for _, rt := range k.served() {
		switch {
		case rt.Group == "public":
			path := rt.Path
			if path == "/" {
				path = "/{$}" // the index alone, not every path under it
			}
			if k.registered[rt.ID] {
				mux.Handle(rt.Method+" "+path, k.public(rt, k.inner))
				mux.Handle(rt.Method+" "+prefix+path, k.public(rt, inner))
			}
		case k.raw[rt.ID] != nil:
			h := k.enforce(rt, k.raw[rt.ID])
			mux.Handle(rt.Method+" "+rt.Path, h)
			mux.Handle(rt.Method+" "+prefix+rt.Path, h)
		default:
			mux.Handle(rt.Method+" "+prefix+rt.Path, k.enforce(rt, inner))
		}
	}
	for _, p := range k.pages {
		h := p.serve()
		mux.Handle("GET "+p.pattern, h)
		mux.Handle("GET "+prefix+p.pattern, h)
	}
	mux.HandleFunc("/", k.notFound)
	return mux
}

// stripVersion serves next the path without the version prefix, as
// http.StripPrefix does, but without its copy of the request and its URL
// (4% of an audited read's CPU, docs/benchmarks.md): the URL edge gave the
// request is the kernel's own, so the prefix is cut from it in place and
// put back once next returns, for the access line and the audit event. A
// request that did not come through edge is stripped by http.StripPrefix.
func stripVersion(prefix string, next http.Handler) http.Handler {
	copying := http.StripPrefix(prefix, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		path, raw := r.URL.Path, r.URL.RawPath
		if st == nil || r.URL != &st.url || !strings.HasPrefix(path, prefix) || raw != "" && !strings.HasPrefix(raw, prefix) {
			copying.ServeHTTP(w, r)
			return
		}
		r.URL.Path = path[len(prefix):]
		if raw != "" {
			r.URL.RawPath = raw[len(prefix):]
		}
		defer func() { r.URL.Path, r.URL.RawPath = path, raw }()
		next.ServeHTTP(w, r)
	})
}

func (k *Kernel) public(rt routes.Route, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.group, info.operation, info.literalPath = rt.Group, rt.Operation, true
		announceDeprecation(w.Header(), rt)
		next.ServeHTTP(w, r)
	})
}

// notFound answers every unrouted request: 405 with Allow when the path
// exists under other methods, else 404, both as problem+json.
func (k *Kernel) notFound(w http.ResponseWriter, r *http.Request) {
	prefix := "/" + APIVersion
	var allow []string
	for _, rt := range k.served() {
		rootToo := rt.Group == "public" || rt.ID == routes.MCP.ID
		if matchPath(prefix+rt.Path, r.URL.Path) || rootToo && matchPath(rt.Path, r.URL.Path) {
			if !slices.Contains(allow, rt.Method) {
				allow = append(allow, rt.Method)
			}
		}
	}
	if len(allow) > 0 {
		slices.Sort(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		WriteProblem(w, r, apierr.New(apierr.MethodNotAllowed, "%s is not allowed on %s.", r.Method, r.URL.Path))
		return
	}
	WriteProblem(w, r, apierr.New(apierr.NotFound, "No endpoint at %s.", r.URL.Path))
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

// Document is the OpenAPI document of every group, as JSON: what
// print-openapi writes and the public function embeds.
func Document(doc *huma.OpenAPI) ([]byte, error) {
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("api: openapi: %w", err)
	}
	return out, nil
}

// CreditsPerDay counts a credit-metered operation's price against the
// caller's creditsPerDay limits now, as an invoke's charge is counted (429
// limit_exceeded when one is spent). The returned release gives it back for
// a call that charges nothing after all (it failed, replayed an earlier
// attempt, or ended without a fill); a failed release is logged.
func (k *Kernel) CreditsPerDay(ctx context.Context, operationID string, priceMicro int64) (release func(), err error) {
	r, err := k.limits.ReserveCredits(ctx, PrincipalFrom(ctx).LimitOwners(), keys.LimitSelectors(operationID, "", ""), priceMicro)
	if err != nil {
		return nil, limits.APIError(err)
	}
	return func() {
		if err := r.Release(context.WithoutCancel(ctx)); err != nil {
			Logger(ctx).Error("creditsPerDay release failed", "operation", operationID, "error", err.Error())
		}
	}, nil
}
