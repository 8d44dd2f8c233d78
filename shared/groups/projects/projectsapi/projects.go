// Package projectsapi is the projects endpoint group. A
// project-bound key sees only its own project; everything else is
// not_found. Its writes commit with their stored idempotent response.
package projectsapi

import (
	"context"
	"net/http"

	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/projects"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
}

type handlers struct {
	k        *api.Kernel
	projects *projects.Repo
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, projects: projects.NewRepo(idempotency.Deferring(d.Store), k.Now)}
	api.Register(k, "projects.list", http.StatusOK, h.list)
	api.Register(k, "projects.create", http.StatusCreated, h.create)
	api.Register(k, "projects.read", http.StatusOK, h.read)
	api.Register(k, "projects.update", http.StatusOK, h.update)
	api.Register(k, "projects.archive", http.StatusOK, h.archive)
	return nil
}

func (h *handlers) create(ctx context.Context, in *api.Body[projects.CreateProjectRequest]) (*api.Body[*projects.Project], error) {
	p := api.PrincipalFrom(ctx)
	if p.Key().ProjectID != nil {
		return nil, apierr.New(apierr.ProjectDenied, "A project-bound key cannot create projects.")
	}
	pr, err := h.projects.Create(ctx, p.Key().AccountID, in.Body)
	if err != nil {
		return nil, err
	}
	h.k.PublishIn(ctx, pr.ID, eventProjectCreated, pr)
	return api.Reply(pr), nil
}

func (h *handlers) list(ctx context.Context, in *api.ListInput) (*api.Body[api.Page[*projects.Project]], error) {
	p := api.PrincipalFrom(ctx)
	if bound := p.Key().ProjectID; bound != nil {
		pr, err := h.projects.Get(ctx, p.Key().AccountID, *bound)
		if err != nil {
			return nil, err
		}
		return api.Reply(api.NewPage([]*projects.Project{pr}, "")), nil
	}
	ps, next, err := h.projects.List(ctx, p.Key().AccountID, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(ps, next)), nil
}

type projectIDInput struct {
	ProjectID string `path:"projectId" doc:"Project id (prj_…)"`
}

// visible enforces the binding: a project-bound key sees only its own
// project, everything else is not_found.
func visible(p *api.Principal, id string) error {
	if bound := p.Key().ProjectID; bound != nil && *bound != id {
		return apierr.New(apierr.NotFound, "No such project.")
	}
	return nil
}

func (h *handlers) read(ctx context.Context, in *projectIDInput) (*api.Body[*projects.Project], error) {
	p := api.PrincipalFrom(ctx)
	if err := visible(p, in.ProjectID); err != nil {
		return nil, err
	}
	pr, err := h.projects.Get(ctx, p.Key().AccountID, in.ProjectID)
	if err != nil {
		return nil, err
	}
	return api.Reply(pr), nil
}

type updateInput struct {
	ProjectID string `path:"projectId" doc:"Project id (prj_…)"`
	Body      projects.UpdateProjectRequest
}

func (h *handlers) update(ctx context.Context, in *updateInput) (*api.Body[*projects.Project], error) {
	p := api.PrincipalFrom(ctx)
	if err := visible(p, in.ProjectID); err != nil {
		return nil, err
	}
	pr, err := h.projects.Update(ctx, p.Key().AccountID, in.ProjectID, in.Body)
	if err != nil {
		return nil, err
	}
	h.k.PublishIn(ctx, pr.ID, eventProjectUpdated, pr)
	return api.Reply(pr), nil
}

func (h *handlers) archive(ctx context.Context, in *projectIDInput) (*api.Body[*projects.Project], error) {
	p := api.PrincipalFrom(ctx)
	if err := visible(p, in.ProjectID); err != nil {
		return nil, err
	}
	pr, err := h.projects.Archive(ctx, p.Key().AccountID, in.ProjectID)
	if err != nil {
		return nil, err
	}
	h.k.PublishIn(ctx, pr.ID, eventProjectArchived, pr)
	return api.Reply(pr), nil
}
