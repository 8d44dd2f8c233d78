// Package routes is the one declarative table of every endpoint: its method,
// path, group (the Lambda that serves it), required scopes, whether it needs
// an Idempotency-Key, its limit operation and the service access it needs.
// Middleware enforces it in one place and the OpenAPI document is generated
// from it; nothing else restates endpoint policy.
package routes

import (
	"fmt"
	"strings"
	"time"
)

// Body says what a route accepts as a request body.
type Body int

const (
	BodyNone Body = iota // no body expected (GET, DELETE, ...)
	BodyJSON             // application/json
	BodyRaw              // any media type (file upload)
	BodyZip              // application/zip (database transfer part)
)

// MaxJSONBody bounds JSON request bodies; MaxRawBody bounds raw uploads
// (4 MiB): API Gateway hands Lambda a binary body base64-encoded
// inside its 6 MB synchronous payload.
const (
	MaxJSONBody = 1 << 20
	MaxRawBody  = 4 << 20
)

// Route is one endpoint's policy.
type Route struct {
	Method string
	Path   string // relative to /v1, net/http pattern syntax ({id})
	Group  string // the function that serves it
	// Operation is the operation id: the limit selector,
	// the audit operation and the default OpenAPI operationId.
	Operation string
	// ID is the OpenAPI operationId and the handle a group registers the
	// route by; it differs from Operation only where two routes share one
	// (GET /capabilities and GET /capabilities/{serviceId}).
	ID     string
	Scopes []string
	Idem   bool
	Body   Body
	// Service is the managed service whose access the route requires, fixed
	// (e.g. core-database) or "" when none or when ServiceFrom names where it comes from.
	Service string
	// ServiceFrom says the service comes from the request: "path:<param>" or
	// "body:<field>".
	ServiceFrom string
	// CreditToken allows the first-key credit token instead of a bearer key.
	CreditToken bool
	// Metered routes are charged in credits; only they accept creditsPerDay.
	Metered bool
	// OperationFrom names the body field holding the managed operation the
	// request reaches ("body:operationId" for invoke and runs), so operation
	// access and the capability limit selectors apply before the handler.
	OperationFrom string
	// Commit: the operation's writes commit in one transaction with its
	// stored idempotent response (idempotency.Unit). Only for operations
	// that neither read their writes back nor interpret their conditions.
	Commit bool
	// ReplayHeaders are the response headers an idempotent replay repeats,
	// beyond Content-Type and Location.
	ReplayHeaders []string
	// Secret: the response carries a secret shown once; its stored
	// idempotent copy is sealed by the envelope key, bound to the caller.
	Secret bool
	// ArchivedReadable: a key bound to an archived project may still call
	// it (reading that project); every other route refuses such a key.
	ArchivedReadable bool
	Summary          string
	// Deprecated marks an operation on its way out (CHANGELOG.md's policy); nil for
	// every operation that is not.
	Deprecated *Deprecation
}

// Deprecation is when a deprecated operation was deprecated, when it stops
// working and what replaces it. The kernel states it on every response of
// the operation (Deprecation, Sunset, Link) and in the OpenAPI document;
// CHANGELOG.md lists it with the same dates.
type Deprecation struct {
	// Since is when the operation was deprecated (and the changelog said so).
	Since time.Time
	// Sunset is when it stops working: at least MinDeprecationNotice after Since.
	Sunset time.Time
	// Successor is the replacement: a route id of the table or a path
	// relative to the base URL ("/projects").
	Successor string
}

// MinDeprecationNotice is how long a deprecated operation keeps working
// after it is announced (CHANGELOG.md: at least 30 days).
const MinDeprecationNotice = 30 * 24 * time.Hour

// Deprecate marks the route deprecated since the date since, working until
// sunset, replaced by successor (a route id or a path).
func (rt Route) Deprecate(since, sunset time.Time, successor string) Route {
	rt.Deprecated = &Deprecation{Since: since.UTC(), Sunset: sunset.UTC(), Successor: successor}
	return rt
}

// Check refuses a deprecation that breaks CHANGELOG.md's policy: a notice shorter than
// MinDeprecationNotice or no successor. The kernel panics on one, so a bad
// table entry fails every test that builds the API.
func (d *Deprecation) Check() error {
	switch {
	case d.Since.IsZero() || d.Sunset.IsZero():
		return fmt.Errorf("routes: a deprecation needs both its date and its sunset")
	case d.Sunset.Sub(d.Since) < MinDeprecationNotice:
		return fmt.Errorf("routes: sunset %s is less than %v after deprecation %s", d.Sunset.Format(time.DateOnly), MinDeprecationNotice, d.Since.Format(time.DateOnly))
	case !strings.HasPrefix(d.SuccessorPath(), "/"):
		return fmt.Errorf("routes: successor %q is neither a route id nor a path", d.Successor)
	}
	return nil
}

// SuccessorPath is the successor as a path relative to the base URL: the
// path of the route it names, or the successor itself when it is a path.
func (d *Deprecation) SuccessorPath() string {
	if rt, ok := ByID(d.Successor); ok {
		return rt.Path
	}
	return d.Successor
}

// The rows of the table are declared by the groups that serve them, each in
// its HTTP package's routes.go (api.Group.Routes); a Lambda links only its
// own group, yet the kernel, keys, audit and webhooks read every row, so
// `make catalogue` (shared/internal/catalogen) writes them all into
// zz_routes.go: Public (the routes that need no key, served at the root and
// under /v1), MCP (the remote MCP transport, likewise at both) and Table
// (every authenticated endpoint), each in the order its rows were added.

// Scope is a permission a key holds and a route names. The group whose
// routes need it declares it, with what it allows (api.Group.Scopes), as it
// declares its rows; `make catalogue` writes every group's into Scopes in
// zz_routes.go, in the order they were added, so that the whole set a
// first key receives keeps its order whatever the order of the groups.
type Scope struct {
	Name   string // resource:action, e.g. "files:read"
	Allows string // what a key holding it may do, one sentence
}

// ScopeNames are the names of Scopes, in order: the complete scope set.
func ScopeNames() []string {
	out := make([]string, len(Scopes))
	for i, s := range Scopes {
		out[i] = s.Name
	}
	return out
}

// Idem and NoIdem say whether New's route requires an Idempotency-Key.
const (
	Idem   = true
	NoIdem = false
)

// New is the route whose operation id is also its route id, needing the
// space-separated scopes (none when ""); the With methods set the rest.
func New(method, path, group, op, scopes string, idem bool, body Body, summary string) Route {
	var s []string
	if scopes != "" {
		s = strings.Split(scopes, " ")
	}
	return Route{Method: method, Path: path, Group: group, Operation: op, ID: op, Scopes: s, Idem: idem, Body: body, Summary: summary}
}

// The With methods each set one field of a route New built (Route says
// what each field means), so that a group's row reads as one expression.

func (rt Route) WithService(s string) Route       { rt.Service = s; return rt }
func (rt Route) WithServiceFrom(s string) Route   { rt.ServiceFrom = s; return rt }
func (rt Route) WithOperationFrom(s string) Route { rt.OperationFrom = s; return rt }
func (rt Route) WithID(id string) Route           { rt.ID = id; return rt }
func (rt Route) WithMetered() Route               { rt.Metered = true; return rt }
func (rt Route) WithCommit() Route                { rt.Commit = true; return rt }
func (rt Route) WithSecret() Route                { rt.Secret = true; return rt }
func (rt Route) WithCreditToken() Route           { rt.CreditToken = true; return rt }
func (rt Route) WithArchivedReadable() Route      { rt.ArchivedReadable = true; return rt }
func (rt Route) WithReplay(headers ...string) Route {
	rt.ReplayHeaders = headers
	return rt
}

// Operations returns every operation id of the table, in table order, once.
func Operations() []string {
	seen := map[string]bool{}
	var out []string
	for _, rt := range Table {
		if !seen[rt.Operation] {
			seen[rt.Operation] = true
			out = append(out, rt.Operation)
		}
	}
	return out
}

// IsOperation reports whether id is an operation id of the table.
func IsOperation(id string) bool {
	for _, rt := range Table {
		if rt.Operation == id {
			return true
		}
	}
	return false
}

// MeteredOperations are the operations that accept creditsPerDay.
func MeteredOperations() []string {
	var out []string
	for _, rt := range Table {
		if rt.Metered {
			out = append(out, rt.Operation)
		}
	}
	return out
}

// Groups lists the function groups of the route table in table order,
// public first; the mcp group (MCP) comes on top of these.
func Groups() []string {
	out := []string{"public"}
	seen := map[string]bool{"public": true}
	for _, rt := range Table {
		if !seen[rt.Group] {
			seen[rt.Group] = true
			out = append(out, rt.Group)
		}
	}
	return out
}

var byID = func() map[string]Route {
	m := map[string]Route{MCP.ID: MCP}
	for _, rt := range append(append([]Route{}, Public...), Table...) {
		if _, dup := m[rt.ID]; dup {
			panic("routes: duplicate route id " + rt.ID)
		}
		m[rt.ID] = rt
	}
	return m
}()

// ByID returns the route a group registers by its id.
func ByID(id string) (Route, bool) {
	rt, ok := byID[id]
	return rt, ok
}

// OfGroup returns the routes a group's function serves, in table order:
// the public routes for "public", MCP for "mcp".
func OfGroup(group string) []Route {
	var out []Route
	for _, rt := range append(append([]Route{MCP}, Public...), Table...) {
		if rt.Group == group {
			out = append(out, rt)
		}
	}
	return out
}
