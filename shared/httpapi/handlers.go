package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/accounts"
	"platformapi/shared/apierr"
	"platformapi/shared/catalog"
	"platformapi/shared/keys"
	"platformapi/shared/projects"
	"platformapi/shared/routes"
	"platformapi/shared/webhooks"
)

// Page is every list response (CONTRACT "Shapes").
type Page[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

func page[T any](data []T, next string) Page[T] {
	if data == nil {
		data = []T{}
	}
	p := Page[T]{Data: data}
	if next != "" {
		p.NextCursor = &next
	}
	return p
}

// ListInput is the paging of every list endpoint (CONTRACT "Shapes"). It is
// exported because huma reads the fields of embedded structs only when the
// embedded type is exported.
type ListInput struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page"`
}

type body[T any] struct{ Body T }

// register adds the implemented operation of the route "METHOD /path",
// documenting it from the route table.
func register[I, O any](s *Server, done map[string]bool, route string, status int, h func(context.Context, *I) (*O, error)) {
	for _, rt := range routes.Table {
		if rt.Method+" "+rt.Path != route {
			continue
		}
		if s.mountedGroup(rt.Group) {
			op := operation(rt, false)
			op.DefaultStatus = status
			huma.Register(s.api, op, h)
			done[route] = true
		}
		return
	}
	panic("httpapi: no route " + route)
}

// registerImplemented registers every built operation and reports which.
func (s *Server) registerImplemented() map[string]bool {
	done := map[string]bool{}
	register(s, done, "POST /api-keys", http.StatusCreated, s.createKey)
	register(s, done, "GET /api-keys", http.StatusOK, s.listKeys)
	register(s, done, "DELETE /api-keys/{id}", http.StatusOK, s.revokeKey)
	register(s, done, "GET /services", http.StatusOK, s.listServices)
	register(s, done, "GET /capabilities", http.StatusOK, s.listCapabilities)
	register(s, done, "GET /capabilities/{serviceId}", http.StatusOK, s.listServiceCapabilities)
	register(s, done, "GET /actions", http.StatusOK, s.listActions)
	register(s, done, "POST /services/{serviceId}/invoke", http.StatusOK, s.invokeService)
	register(s, done, "GET /credits/balance", http.StatusOK, s.readBalance)
	register(s, done, "POST /credits/x402/top-up", http.StatusOK, s.topUpCredits)
	register(s, done, "GET /projects", http.StatusOK, s.listProjects)
	register(s, done, "POST /projects", http.StatusCreated, s.createProject)
	register(s, done, "GET /projects/{projectId}", http.StatusOK, s.readProject)
	register(s, done, "PATCH /projects/{projectId}", http.StatusOK, s.updateProject)
	register(s, done, "DELETE /projects/{projectId}", http.StatusOK, s.archiveProject)
	register(s, done, "GET /approvals", http.StatusOK, s.listApprovals)
	register(s, done, "POST /approvals/service-actions", http.StatusCreated, s.createApproval)
	register(s, done, "POST /approvals/{approvalId}", http.StatusOK, s.decideApproval)
	s.registerWebhooks(done)
	s.registerRuns(done)
	return done
}

// --- API keys ---

type createdKey struct {
	keys.Key
	Secret string `json:"secret" doc:"The key itself. Shown only in this response; store it now."`
}

func (s *Server) createKey(ctx context.Context, in *body[keys.CreateKeyRequest]) (*body[createdKey], error) {
	p := principal(ctx)
	var (
		c   *keys.Created
		err error
	)
	if p.CreditToken != nil {
		c, err = s.keys.CreateAccount(ctx, *p.CreditToken, in.Body)
	} else {
		k := p.Key()
		c, err = s.keys.CreateChild(ctx, p.Chain, in.Body, func(id string) bool {
			ok, err := s.projects.Active(ctx, k.AccountID, id)
			return err == nil && ok
		})
	}
	if err != nil {
		return nil, err
	}
	s.publish(ctx, webhooks.EventAPIKeyCreated, c.Key)
	return &body[createdKey]{Body: createdKey{Key: *c.Key, Secret: c.Secret}}, nil
}

func (s *Server) listKeys(ctx context.Context, in *ListInput) (*body[Page[*keys.Key]], error) {
	ks, next, err := s.keys.List(ctx, principal(ctx).Chain, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return &body[Page[*keys.Key]]{Body: page(ks, next)}, nil
}

type keyIDInput struct {
	ID string `path:"id" doc:"API key id (key_…)"`
}

func (s *Server) revokeKey(ctx context.Context, in *keyIDInput) (*body[*keys.Key], error) {
	p := principal(ctx)
	k, err := s.keys.Revoke(ctx, p.Key(), in.ID)
	if err != nil {
		return nil, err
	}
	k.Status = "revoked"
	s.publish(ctx, webhooks.EventAPIKeyRevoked, k)
	return &body[*keys.Key]{Body: k}, nil
}

// --- Projects ---

func (s *Server) createProject(ctx context.Context, in *body[projects.CreateProjectRequest]) (*body[*projects.Project], error) {
	p := principal(ctx)
	if p.Key().ProjectID != nil {
		return nil, apierr.New(apierr.ProjectDenied, "A project-bound key cannot create projects.")
	}
	pr, err := s.projects.Create(ctx, p.Key().AccountID, in.Body)
	if err != nil {
		return nil, err
	}
	s.publishIn(ctx, pr.ID, webhooks.EventProjectCreated, pr)
	return &body[*projects.Project]{Body: pr}, nil
}

func (s *Server) listProjects(ctx context.Context, in *ListInput) (*body[Page[*projects.Project]], error) {
	p := principal(ctx)
	if bound := p.Key().ProjectID; bound != nil {
		pr, err := s.projects.Get(ctx, p.Key().AccountID, *bound)
		if err != nil {
			return nil, err
		}
		return &body[Page[*projects.Project]]{Body: page([]*projects.Project{pr}, "")}, nil
	}
	ps, next, err := s.projects.List(ctx, p.Key().AccountID, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return &body[Page[*projects.Project]]{Body: page(ps, next)}, nil
}

type projectIDInput struct {
	ProjectID string `path:"projectId" doc:"Project id (prj_…)"`
}

// visibleProject enforces the binding: a project-bound key sees only its own
// project, everything else is not_found.
func visibleProject(p *Principal, id string) error {
	if bound := p.Key().ProjectID; bound != nil && *bound != id {
		return apierr.New(apierr.NotFound, "No such project.")
	}
	return nil
}

func (s *Server) readProject(ctx context.Context, in *projectIDInput) (*body[*projects.Project], error) {
	p := principal(ctx)
	if err := visibleProject(p, in.ProjectID); err != nil {
		return nil, err
	}
	pr, err := s.projects.Get(ctx, p.Key().AccountID, in.ProjectID)
	if err != nil {
		return nil, err
	}
	return &body[*projects.Project]{Body: pr}, nil
}

type updateProjectInput struct {
	ProjectID string `path:"projectId" doc:"Project id (prj_…)"`
	Body      projects.UpdateProjectRequest
}

func (s *Server) updateProject(ctx context.Context, in *updateProjectInput) (*body[*projects.Project], error) {
	p := principal(ctx)
	if err := visibleProject(p, in.ProjectID); err != nil {
		return nil, err
	}
	pr, err := s.projects.Update(ctx, p.Key().AccountID, in.ProjectID, in.Body)
	if err != nil {
		return nil, err
	}
	s.publishIn(ctx, pr.ID, webhooks.EventProjectUpdated, pr)
	return &body[*projects.Project]{Body: pr}, nil
}

func (s *Server) archiveProject(ctx context.Context, in *projectIDInput) (*body[*projects.Project], error) {
	p := principal(ctx)
	if err := visibleProject(p, in.ProjectID); err != nil {
		return nil, err
	}
	pr, err := s.projects.Archive(ctx, p.Key().AccountID, in.ProjectID)
	if err != nil {
		return nil, err
	}
	s.publishIn(ctx, pr.ID, webhooks.EventProjectArchived, pr)
	return &body[*projects.Project]{Body: pr}, nil
}

// --- Credits ---

type balanceBody struct {
	Balance float64 `json:"balance" doc:"Credits available to the account"`
	Unit    string  `json:"unit" enum:"credits"`
}

// readBalance answers from the account item read with the key chain: a
// strongly consistent read made by this very request.
func (s *Server) readBalance(ctx context.Context, _ *struct{}) (*body[balanceBody], error) {
	micro := principal(ctx).Account.Int(accounts.AttrBalance)
	return &body[balanceBody]{Body: balanceBody{Balance: float64(micro) / catalog.MicroPerCredit, Unit: "credits"}}, nil
}
