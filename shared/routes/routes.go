// Package routes is the one declarative table of every endpoint: its method,
// path, group (the Lambda that serves it), required scopes, whether it needs
// an Idempotency-Key, its limit operation and the service access it needs.
// Middleware enforces it in one place and the OpenAPI document is generated
// from it; nothing else restates endpoint policy.
package routes

import (
	"fmt"
	"net/http"
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

// Public routes need no key. They are served at the root and under /v1.
var Public = []Route{
	{Method: http.MethodGet, Path: "/", Group: "public", Operation: "index.read", ID: "index.read", Summary: "Where to start: links to the reference, the OpenAPI document and health"},
	{Method: http.MethodGet, Path: "/health", Group: "public", Operation: "health.read", ID: "health.read", Summary: "Service and API-version health"},
	{Method: http.MethodGet, Path: "/openapi.json", Group: "public", Operation: "openapi.read", ID: "openapi.read", Summary: "This OpenAPI 3.1 document"},
	{Method: http.MethodGet, Path: "/pricing", Group: "public", Operation: "pricing.read", ID: "pricing.read", Summary: "Server-owned price and availability catalogue"},
	{Method: http.MethodGet, Path: "/docs", Group: "public", Operation: "docs.read", ID: "docs.read", Summary: "Browsable API reference"},
	{Method: http.MethodGet, Path: "/docs/assets/{name}", Group: "public", Operation: "docs.read", ID: "docs.assets.read", Summary: "The reference page's script (Redoc, served from here: no CDN)"},
}

// MCP is the remote MCP transport (docs/mcp.md): POST, Streamable HTTP, the
// same bearer key, which must hold services:read and actions.list. It is
// served at the root and under /v1; each tool call then runs the managed
// operation's own policy.
var MCP = Route{Method: http.MethodPost, Path: "/mcp", Group: "mcp", Operation: "actions.list", ID: "mcp", Scopes: []string{"services:read"}, Body: BodyJSON,
	Summary: "Remote MCP server (Streamable HTTP, stateless, JSON responses)"}

func r(method, path, group, op, scope string, idem bool, body Body, summary string) Route {
	var scopes []string
	if scope != "" {
		scopes = strings.Split(scope, " ")
	}
	return Route{Method: method, Path: path, Group: group, Operation: op, ID: op, Scopes: scopes, Idem: idem, Body: body, Summary: summary}
}

func (rt Route) service(s string) Route     { rt.Service = s; return rt }
func (rt Route) serviceFrom(s string) Route { rt.ServiceFrom = s; return rt }
func (rt Route) metered() Route             { rt.Metered = true; return rt }
func (rt Route) id(id string) Route         { rt.ID = id; return rt }
func (rt Route) commit() Route              { rt.Commit = true; return rt }
func (rt Route) archivedReadable() Route    { rt.ArchivedReadable = true; return rt }
func (rt Route) secret() Route              { rt.Secret = true; return rt }
func (rt Route) operationFrom(s string) Route {
	rt.OperationFrom = s
	return rt
}
func (rt Route) replay(headers ...string) Route {
	rt.ReplayHeaders = headers
	return rt
}

const (
	get, post, patch, del, put = http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut
	idem, noIdem               = true, false
)

// Table holds every authenticated endpoint (and /mcp).
var Table = []Route{
	// 4.1 API keys, services, credits
	r(get, "/api-keys", "keys", "apiKeys.list", "api_keys:manage", noIdem, BodyNone, "List the calling key and its descendants"),
	func() Route {
		rt := r(post, "/api-keys", "keys", "apiKeys.create", "api_keys:manage", idem, BodyJSON, "Create a child key, or the first key with a credit token").secret().commit()
		rt.CreditToken = true
		return rt
	}(),
	r(del, "/api-keys/{id}", "keys", "apiKeys.revoke", "api_keys:manage", idem, BodyNone, "Revoke a key and, with it, its descendants"),
	r(post, "/api-keys/{id}/roll", "keys", "apiKeys.roll", "api_keys:manage", idem, BodyJSON, "Replace a key by a new one with the same policy; the old one works until the chosen expiry").secret().commit(),
	r(get, "/services", "services", "services.list", "services:read", noIdem, BodyNone, "List managed services visible to the key"),
	r(get, "/capabilities", "services", "capabilities.list", "services:read", noIdem, BodyNone, "List capabilities visible to the key"),
	r(get, "/capabilities/{serviceId}", "services", "capabilities.list", "services:read", noIdem, BodyNone, "List one service's capabilities").serviceFrom("path:serviceId").id("capabilities.list.byService"),
	r(get, "/actions", "services", "actions.list", "services:read", noIdem, BodyNone, "Everything this key can call, after all four controls"),
	r(post, "/services/{serviceId}/invoke", "services", "services.invoke", "services:invoke", idem, BodyJSON, "Invoke a managed service operation").serviceFrom("path:serviceId").operationFrom("body:operationId").metered().
		replay("X-Service-Credits-Charged", "X-Service-Upstream-Request-Id"),
	r(get, "/credits/balance", "credits", "credits.balance.read", "credits:read", noIdem, BodyNone, "Read the account's credit balance"),
	r(get, "/credits/ledger", "credits", "credits.ledger.list", "credits:read", noIdem, BodyNone, "List every change of the credit balance, newest first"),
	r(post, "/credits/x402/top-up", "credits", "credits.x402.topUp", "credits:write", idem, BodyJSON, "Buy credits through x402").replay("Payment-Response", "X-Service-Paid-Agent-Receipt"),

	// 4.2 Projects, usage, files, connections
	r(get, "/projects", "projects", "projects.list", "projects:read", noIdem, BodyNone, "List projects visible to the key").archivedReadable(),
	r(post, "/projects", "projects", "projects.create", "projects:write", idem, BodyJSON, "Create a project").commit(),
	r(get, "/projects/{projectId}", "projects", "projects.read", "projects:read", noIdem, BodyNone, "Read a project").archivedReadable(),
	r(patch, "/projects/{projectId}", "projects", "projects.update", "projects:write", idem, BodyJSON, "Update a project").commit(),
	r(del, "/projects/{projectId}", "projects", "projects.archive", "projects:write", idem, BodyNone, "Archive a project").commit(),
	r(get, "/usage", "projects", "usage.read", "usage:read", noIdem, BodyNone, "Project request and charged-credit summaries"),
	r(get, "/audit-events", "projects", "auditEvents.list", "audit:read", noIdem, BodyNone, "Project request audit events"),
	r(get, "/files", "files", "files.list", "files:read", noIdem, BodyNone, "List project files"),
	r(post, "/files", "files", "files.create", "files:write", idem, BodyRaw, "Upload a project file").commit().replay("X-Content-Sha256"),
	r(get, "/files/{fileId}", "files", "files.read", "files:read", noIdem, BodyNone, "Read a file's record"),
	r(get, "/files/{fileId}/content", "files", "files.read", "files:read", noIdem, BodyNone, "Download a file's bytes").id("files.content.read"),
	r(del, "/files/{fileId}", "files", "files.delete", "files:write", idem, BodyNone, "Delete a project file").commit(),
	r(get, "/connections", "connections", "connections.list", "connections:read", noIdem, BodyNone, "List protected connections"),
	r(post, "/connections", "connections", "connections.create", "connections:write", idem, BodyJSON, "Create a protected connection").commit(),
	r(get, "/connections/{connectionId}", "connections", "connections.read", "connections:read", noIdem, BodyNone, "Read a protected connection's metadata"),
	r(patch, "/connections/{connectionId}", "connections", "connections.update", "connections:write", idem, BodyJSON, "Rotate or disable a protected connection").commit(),
	r(del, "/connections/{connectionId}", "connections", "connections.delete", "connections:write", idem, BodyNone, "Delete a protected connection").commit(),

	// 4.3 Managed databases
	r(get, "/databases/account", "databases", "databases.account.read", "databases:read", noIdem, BodyNone, "Read the managed database").service("core-database"),
	r(post, "/databases/account", "databases", "databases.account.provision", "databases:write", idem, BodyJSON, "Provision the managed database").service("core-database"),
	r(del, "/databases/account", "databases", "databases.account.deprovision", "databases:write", idem, BodyNone, "Deprovision the managed database").service("core-database"),
	r(post, "/databases/query", "databases", "databases.query", "databases:read", noIdem, BodyJSON, "Run a read query").service("core-database"),
	r(post, "/databases/actions", "databases", "databases.actions", "databases:write", idem, BodyJSON, "Change database structure or records").service("core-database"),
	r(post, "/databases/transfers", "databases", "databases.transfers.create", "databases:write", idem, BodyJSON, "Start a portable-copy transfer").service("core-database"),
	r(put, "/databases/transfers/{transferId}/parts/{partNumber}", "databases", "databases.transfers.part.upload", "databases:write", idem, BodyZip, "Upload one archive part").service("core-database"),
	r(post, "/databases/transfers/{transferId}/complete", "databases", "databases.transfers.complete", "databases:write", idem, BodyJSON, "Complete a transfer").service("core-database"),
	r(get, "/databases/transfers/{transferId}/archive", "databases", "databases.transfers.archive", "databases:read", noIdem, BodyNone, "Download a transfer's archive").service("core-database"),
	r(get, "/databases/transfers/{transferId}", "databases", "databases.transfers.read", "databases:read", noIdem, BodyNone, "Read a transfer").service("core-database"),
	r(del, "/databases/transfers/{transferId}", "databases", "databases.transfers.cancel", "databases:write", idem, BodyNone, "Cancel a transfer").service("core-database"),

	// 4.4 Managed wallets and trading
	r(get, "/wallets", "wallets", "wallets.list", "wallets:read", noIdem, BodyNone, "List wallets").service("managed-wallets"),
	r(post, "/wallets", "wallets", "wallets.create", "wallets:create", idem, BodyJSON, "Create a managed wallet").service("managed-wallets").commit(),
	r(get, "/wallets/{walletId}", "wallets", "wallets.read", "wallets:read", noIdem, BodyNone, "Read a wallet").service("managed-wallets"),
	r(get, "/wallets/{walletId}/balances", "wallets", "wallets.balances.read", "wallets:read", noIdem, BodyNone, "Read a wallet's balances").service("managed-wallets"),
	r(patch, "/wallets/{walletId}/policy", "wallets", "wallets.policy.update", "approvals:write", idem, BodyJSON, "Administer wallet policy").service("managed-wallets").commit(),
	r(post, "/wallets/{walletId}/transactions/quote", "wallets", "wallets.transactions.quote", "wallets:transact", idem, BodyJSON, "Quote a wallet transaction").service("managed-wallets"),
	r(post, "/wallets/{walletId}/transactions", "wallets", "wallets.transactions.create", "wallets:transact", idem, BodyJSON, "Execute a wallet transaction").service("managed-wallets").metered(),
	r(get, "/wallets/{walletId}/transactions", "wallets", "wallets.transactions.list", "wallets:read", noIdem, BodyNone, "List a wallet's transactions").service("managed-wallets"),
	r(get, "/wallets/{walletId}/transactions/{transactionId}", "wallets", "wallets.transactions.read", "wallets:read", noIdem, BodyNone, "Read a wallet transaction").service("managed-wallets"),
	r(post, "/wallets/{walletId}/signatures/quote", "wallets", "wallets.signatures.quote", "wallets:sign", idem, BodyJSON, "Quote a message signature").service("managed-wallets"),
	r(post, "/wallets/{walletId}/signatures", "wallets", "wallets.signatures.create", "wallets:sign", idem, BodyJSON, "Execute an approved message signature").service("managed-wallets"),
	r(post, "/trading/quotes", "trading", "trading.quotes.create", "trading:execute", idem, BodyJSON, "Quote a spot trade").service("managed-trading"),
	r(post, "/trading/orders", "trading", "trading.orders.create", "trading:execute", idem, BodyJSON, "Submit a spot trade").service("managed-trading").metered(),
	r(get, "/trading/orders", "trading", "trading.orders.list", "trading:read", noIdem, BodyNone, "List orders").service("managed-trading"),
	r(get, "/trading/orders/{orderId}", "trading", "trading.orders.read", "trading:read", noIdem, BodyNone, "Read an order").service("managed-trading"),
	r(get, "/trading/positions", "trading", "trading.positions.list", "trading:read", noIdem, BodyNone, "List positions").service("managed-trading"),

	// 4.5 Universal swaps
	r(get, "/swaps/tokens", "swaps", "swaps.tokens.list", "wallets:read", noIdem, BodyNone, "List swap tokens").service("universal-swaps"),
	r(post, "/swaps/quote", "swaps", "swaps.quote", "wallets:transact", idem, BodyJSON, "Quote a swap").service("universal-swaps"),
	r(post, "/swaps", "swaps", "swaps.execute", "wallets:transact", idem, BodyJSON, "Execute a swap").service("universal-swaps").metered(),
	r(get, "/swaps", "swaps", "swaps.list", "wallets:read", noIdem, BodyNone, "List swaps").service("universal-swaps"),
	r(get, "/swaps/{swapId}", "swaps", "swaps.read", "wallets:read", noIdem, BodyNone, "Read a swap").service("universal-swaps"),
	r(post, "/swaps/prepare", "swaps", "swaps.prepare", "wallets:read", noIdem, BodyJSON, "Build an unsigned swap for the caller's own wallet").service("universal-swaps"),
	r(get, "/swaps/routes/{routeId}", "swaps", "swaps.routes.read", "wallets:read", noIdem, BodyNone, "Follow a swap route's fills").service("universal-swaps"),

	// 4.6 Runs, approvals, artifacts, webhooks
	r(get, "/runs", "runs", "runs.list", "runs:read", noIdem, BodyNone, "List durable runs"),
	r(post, "/runs", "runs", "runs.create", "runs:write", idem, BodyJSON, "Start a durable run").serviceFrom("body:serviceId").operationFrom("body:operationId").metered(),
	r(get, "/runs/{runId}", "runs", "runs.read", "runs:read", noIdem, BodyNone, "Read a durable run"),
	r(post, "/runs/{runId}/cancel", "runs", "runs.cancel", "runs:write", idem, BodyNone, "Cancel a durable run"),
	r(get, "/approvals", "approvals", "approvals.list", "approvals:read", noIdem, BodyNone, "List approvals"),
	r(post, "/approvals/service-actions", "approvals", "approvals.create", "approvals:write", idem, BodyJSON, "Request approval for a service action").serviceFrom("body:serviceId").commit(),
	r(post, "/approvals/{approvalId}", "approvals", "approvals.decide", "approvals:write", idem, BodyJSON, "Approve or reject").commit(),
	r(get, "/artifacts", "artifacts", "artifacts.list", "artifacts:read", noIdem, BodyNone, "List run artifacts"),
	r(get, "/artifacts/{artifactId}/content", "artifacts", "artifacts.content.read", "artifacts:read", noIdem, BodyNone, "Download an artifact"),
	r(get, "/webhooks", "webhooks", "webhooks.list", "webhooks:read", noIdem, BodyNone, "List webhooks"),
	r(post, "/webhooks", "webhooks", "webhooks.create", "webhooks:write", idem, BodyJSON, "Create a webhook").secret().commit(),
	r(patch, "/webhooks/{webhookId}", "webhooks", "webhooks.update", "webhooks:write", idem, BodyJSON, "Update a webhook"),
	r(post, "/webhooks/{webhookId}/rotate-secret", "webhooks", "webhooks.rotate", "webhooks:write", idem, BodyNone, "Rotate a webhook's signing secret").secret(),
	r(del, "/webhooks/{webhookId}", "webhooks", "webhooks.disable", "webhooks:write", idem, BodyNone, "Disable a webhook"),
	r(get, "/webhook-deliveries", "webhooks", "webhookDeliveries.list", "webhooks:read", noIdem, BodyNone, "List webhook deliveries"),
	r(post, "/webhook-deliveries/{deliveryId}/replay", "webhooks", "webhookDeliveries.replay", "webhooks:write", idem, BodyNone, "Replay a webhook delivery"),
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
