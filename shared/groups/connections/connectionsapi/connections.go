// Package connectionsapi is the protected-connections endpoint group:
// credentials a client hands over once, write-only, that managed
// services use by reference. A key sees the connections of its account in
// its project scope (account level without a project); any other is
// not_found. Create, update and delete commit with their stored idempotent
// response.
package connectionsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/connections"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
	// Sealer seals credentials (KMS on AWS); nil: creating and rotating
	// answer 503.
	Sealer envelope.Sealer
}

type handlers struct {
	k     *api.Kernel
	conns *connections.Repo
}

// Register adds the group's operations to the kernel. The repository is on
// a deferring store: each write is one transaction, committed with the
// idempotent response (routes: .commit()).
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, conns: connections.NewRepo(idempotency.Deferring(d.Store), d.Sealer, k.Now)}
	api.Register(k, "connections.list", http.StatusOK, h.list)
	api.Register(k, "connections.create", http.StatusCreated, h.create, guardCredentials)
	api.Register(k, "connections.read", http.StatusOK, h.read)
	api.Register(k, "connections.update", http.StatusOK, h.update, guardCredentials)
	api.Register(k, "connections.delete", http.StatusOK, h.delete)
	return nil
}

// guardCredentials answers a body whose credentials repeat a key before
// the kernel's strict decoder does: its error names the key, which may be
// a secret a client pasted there, and a 400 is stored in clear for
// idempotent replay.
func guardCredentials(op *huma.Operation) {
	op.Middlewares = append(op.Middlewares, func(ctx huma.Context, next func(huma.Context)) {
		r, w := humago.Unwrap(ctx)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			api.WriteProblem(w, r, apierr.Invalid("The request body could not be read."))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := connections.CheckBody(body); err != nil {
			api.WriteProblem(w, r, err)
			return
		}
		next(ctx)
	})
}

// scope is the caller's account and project.
func scope(ctx context.Context) (accountID, projectID string) {
	p := api.PrincipalFrom(ctx)
	return p.Key().AccountID, p.ProjectID
}

// credentials is the credentials object, kept raw: only the connections
// package decodes it, strictly and by type, so no generic decoder can echo
// a secret in an error. Its schema documents each type's fields.
type credentials json.RawMessage

func (c *credentials) UnmarshalJSON(b []byte) error {
	*c = credentials(bytes.Clone(b))
	return nil
}

func (c credentials) MarshalJSON() ([]byte, error) {
	if len(c) == 0 {
		return []byte("null"), nil
	}
	return c, nil
}

func str(doc string, maxLen int) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Description: doc, MinLength: new(1), MaxLength: new(maxLen)}
}

// credentialTypes are the schemas of each type's credentials. They list no
// additionalProperties rule: the connections package refuses unknown
// fields with a message that never repeats a field name (a client may
// paste a secret where a name belongs).
func credentialTypes() []*huma.Schema {
	obj := func(title, doc string, required []string, props map[string]*huma.Schema) *huma.Schema {
		return &huma.Schema{Type: huma.TypeObject, Title: title, Description: doc, Required: required, Properties: props}
	}
	return []*huma.Schema{
		obj("api_key", "type api_key: sent as `<headerName>: <key>`.", []string{"key"}, map[string]*huma.Schema{
			"key":        str("The API key (printable ASCII)", connections.MaxSecret),
			"headerName": str("The header that carries it; default X-API-Key. Not one the platform sets itself (Authorization of the operator, Content-Type, Host, X-Request-Id, ...)", 64),
		}),
		obj("bearer", "type bearer: sent as `Authorization: Bearer <token>`.", []string{"token"}, map[string]*huma.Schema{
			"token": str("The bearer token (printable ASCII)", connections.MaxSecret),
		}),
		obj("basic", "type basic: sent as `Authorization: Basic base64(<username>:<password>)`.", []string{"username", "password"}, map[string]*huma.Schema{
			"username": str("The user name, without a colon", connections.MaxUsername),
			"password": str("The password", connections.MaxSecret),
		}),
		obj("oauth2", "type oauth2: the access token is sent as `Authorization: Bearer <accessToken>`; the rest is kept sealed for the service's token refresh.", []string{"accessToken"}, map[string]*huma.Schema{
			"accessToken":  str("The access token (printable ASCII)", connections.MaxSecret),
			"refreshToken": str("The refresh token", connections.MaxSecret),
			"expiresAt":    {Type: huma.TypeString, Format: "date-time", Description: "When the access token expires (RFC 3339)"},
			"tokenUrl":     str("The token endpoint (https)", 2048),
			"clientId":     str("The OAuth client id", connections.MaxUsername),
			"clientSecret": str("The OAuth client secret", connections.MaxSecret),
		}),
	}
}

func (credentials) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{
		Description: "The secret, write-only: sealed at once, never returned, listed, logged or sent anywhere but to the managed services the connection allows. " +
			"Its fields depend on `type` (exactly those fields; anything else is `400 validation_failed` naming the rule, never the value).",
		OneOf: credentialTypes(),
	}
}

type connectionCreateBody struct {
	Label       string            `json:"label" minLength:"1" maxLength:"128" doc:"A name for people"`
	Type        string            `json:"type" enum:"api_key,bearer,basic,oauth2" doc:"How the service receives the secret"`
	Credentials credentials       `json:"credentials"`
	ServiceIDs  []string          `json:"serviceIds" minItems:"1" maxItems:"32" doc:"The managed services that may use the connection (GET /v1/services)"`
	Metadata    map[string]string `json:"metadata,omitempty" maxProperties:"16" doc:"Free pairs for the client (keys up to 64, values up to 512 characters); never secret"`
}

func (h *handlers) create(ctx context.Context, in *api.Body[connectionCreateBody]) (*api.Body[*connections.Connection], error) {
	accountID, projectID := scope(ctx)
	b := in.Body
	c, err := h.conns.Create(ctx, accountID, projectID, connections.CreateRequest{
		Label: b.Label, Type: b.Type, Credentials: json.RawMessage(b.Credentials), ServiceIDs: b.ServiceIDs, Metadata: b.Metadata,
	})
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, connections.EventCreated, c)
	return api.Reply(c), nil
}

func (h *handlers) list(ctx context.Context, in *api.ListInput) (*api.Body[api.Page[*connections.Connection]], error) {
	accountID, projectID := scope(ctx)
	list, next, err := h.conns.List(ctx, accountID, projectID, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(list, next)), nil
}

type connectionIDInput struct {
	ConnectionID string `path:"connectionId" maxLength:"64" doc:"Connection id (con_…)"`
}

func (h *handlers) read(ctx context.Context, in *connectionIDInput) (*api.Body[*connections.Connection], error) {
	accountID, projectID := scope(ctx)
	c, err := h.conns.Get(ctx, accountID, projectID, in.ConnectionID)
	if err != nil {
		return nil, err
	}
	return api.Reply(c), nil
}

type connectionUpdateBody struct {
	Label       *string     `json:"label,omitempty" minLength:"1" maxLength:"128" doc:"A new name"`
	Status      *string     `json:"status,omitempty" enum:"active,disabled" doc:"Disable (services can no longer use it: 409 connection_disabled), or enable again"`
	Credentials credentials `json:"credentials,omitempty" doc:"New credentials of the connection's type: rotates (credentialVersion + 1). The replaced version stays usable for 24 hours by runs created before the rotation, then it is destroyed."`
}

type updateInput struct {
	ConnectionID string `path:"connectionId" maxLength:"64" doc:"Connection id (con_…)"`
	Body         connectionUpdateBody
}

func (h *handlers) update(ctx context.Context, in *updateInput) (*api.Body[*connections.Connection], error) {
	accountID, projectID := scope(ctx)
	b := in.Body
	c, events, err := h.conns.Update(ctx, accountID, projectID, in.ConnectionID, connections.UpdateRequest{
		Label: b.Label, Status: b.Status, Credentials: json.RawMessage(b.Credentials),
	})
	if err != nil {
		return nil, err
	}
	for _, ev := range events {
		h.k.Publish(ctx, ev, c)
	}
	return api.Reply(c), nil
}

func (h *handlers) delete(ctx context.Context, in *connectionIDInput) (*api.Body[*connections.Connection], error) {
	accountID, projectID := scope(ctx)
	c, err := h.conns.Delete(ctx, accountID, projectID, in.ConnectionID)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, connections.EventDeleted, c)
	return api.Reply(c), nil
}
