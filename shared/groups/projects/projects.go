// Package projects holds an account's projects. A project-bound key sees and
// acts in its own project only; archiving a project freezes it (read-only)
// and refuses every request a key bound to it makes, except reading it.
package projects

import (
	"context"
	"errors"
	"fmt"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/paging"
)

// Status values.
const (
	StatusActive   = "active"
	StatusArchived = "archived"
)

// Project is the resource.
type Project struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
	Status      string            `json:"status" enum:"active,archived"`
	CreatedAt   time.Time         `json:"createdAt"`
	UpdatedAt   time.Time         `json:"updatedAt"`
	ArchivedAt  *time.Time        `json:"archivedAt"`
}

// CreateProjectRequest is the body of POST /projects.
type CreateProjectRequest struct {
	Name        string            `json:"name" minLength:"1" maxLength:"100"`
	Description string            `json:"description,omitempty" maxLength:"1000"`
	Metadata    map[string]string `json:"metadata,omitempty" maxProperties:"20" doc:"Up to 20 string pairs"`
}

// UpdateProjectRequest is the body of PATCH /projects/{projectId}; absent fields stay.
type UpdateProjectRequest struct {
	Name        *string           `json:"name,omitempty" minLength:"1" maxLength:"100"`
	Description *string           `json:"description,omitempty" maxLength:"1000"`
	Metadata    map[string]string `json:"metadata,omitempty" maxProperties:"20" doc:"Replaces the metadata when sent"`
}

func itemKey(accountID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "prj#" + id}
}

// Repo persists projects.
type Repo struct {
	st  store.Store
	now func() time.Time
}

// NewRepo builds a project repository on the item store.
func NewRepo(st store.Store, now func() time.Time) *Repo { return &Repo{st: st, now: now} }

func encode(accountID string, p *Project) store.Item {
	it := store.NewItem(itemKey(accountID, p.ID))
	it.SetDoc(p)
	it["status"] = p.Status
	return it
}

func decode(it store.Item) (*Project, error) {
	var p Project
	if err := it.Doc(&p); err != nil {
		return nil, fmt.Errorf("projects: decode: %w", err)
	}
	return &p, nil
}

var errNotFound = apierr.New(apierr.NotFound, "No such project.")

// Create stores a new active project.
func (r *Repo) Create(ctx context.Context, accountID string, req CreateProjectRequest) (*Project, error) {
	now := r.now().UTC()
	p := &Project{ID: ids.New("prj", now), Name: req.Name, Description: req.Description, Metadata: req.Metadata, Status: StatusActive, CreatedAt: now, UpdatedAt: now}
	if p.Metadata == nil {
		p.Metadata = map[string]string{}
	}
	if err := r.st.Put(ctx, encode(accountID, p), store.NotExists()); err != nil {
		return nil, fmt.Errorf("projects: create: %w", err)
	}
	return p, nil
}

// Get reads one project of the account; not_found when absent or malformed.
func (r *Repo) Get(ctx context.Context, accountID, id string) (*Project, error) {
	if !ids.Valid("prj", id) {
		return nil, errNotFound
	}
	it, err := r.st.Get(ctx, itemKey(accountID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("projects: get: %w", err)
	}
	return decode(it)
}

// Active reports whether id names an active project of the account.
func (r *Repo) Active(ctx context.Context, accountID, id string) (bool, error) {
	p, err := r.Get(ctx, accountID, id)
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.Code == apierr.NotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return p.Status == StatusActive, nil
}

// List pages through the account's projects, oldest first.
func (r *Repo) List(ctx context.Context, accountID string, limit int, cursor string) ([]*Project, string, error) {
	after, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	page, err := r.st.Query(ctx, store.Query{PK: "acct#" + accountID, Prefix: "prj#", After: after, Limit: limit})
	if err != nil {
		return nil, "", fmt.Errorf("projects: list: %w", err)
	}
	out := make([]*Project, 0, len(page.Items))
	for _, it := range page.Items {
		p, err := decode(it)
		if err != nil {
			return nil, "", err
		}
		out = append(out, p)
	}
	next := ""
	if page.More && len(page.Items) > 0 {
		next = paging.Cursor(page.Items[len(page.Items)-1].Key().SK)
	}
	return out, next, nil
}

// Update changes an active project; an archived one is read-only (409).
func (r *Repo) Update(ctx context.Context, accountID, id string, req UpdateProjectRequest) (*Project, error) {
	return r.mutate(ctx, accountID, id, func(p *Project) error {
		if p.Status == StatusArchived {
			return apierr.New(apierr.Conflict, "The project is archived and read-only.")
		}
		if req.Name != nil {
			p.Name = *req.Name
		}
		if req.Description != nil {
			p.Description = *req.Description
		}
		if req.Metadata != nil {
			p.Metadata = req.Metadata
		}
		return nil
	})
}

// Archive archives a project; archiving an archived project changes nothing.
func (r *Repo) Archive(ctx context.Context, accountID, id string) (*Project, error) {
	return r.mutate(ctx, accountID, id, func(p *Project) error {
		if p.Status == StatusActive {
			now := r.now().UTC()
			p.Status, p.ArchivedAt = StatusArchived, &now
		}
		return nil
	})
}

// mutate is a read-modify-write guarded by a revision counter, so two
// concurrent writers never lose each other's change silently: the loser
// retries on fresh data (or, inside an idempotency unit, the commit fails
// and nothing is written).
func (r *Repo) mutate(ctx context.Context, accountID, id string, change func(*Project) error) (*Project, error) {
	if !ids.Valid("prj", id) {
		return nil, errNotFound
	}
	for attempt := 0; attempt < 5; attempt++ {
		it, err := r.st.Get(ctx, itemKey(accountID, id))
		if errors.Is(err, store.ErrNotFound) {
			return nil, errNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("projects: read: %w", err)
		}
		p, err := decode(it)
		if err != nil {
			return nil, err
		}
		if err := change(p); err != nil {
			return nil, err
		}
		p.UpdatedAt = r.now().UTC()
		rev := it.Int("rev")
		next := encode(accountID, p)
		next["rev"] = rev + 1
		// rev == the value read (an absent rev reads as 0).
		err = r.st.Put(ctx, next, store.Exists(), store.NumAtLeast("rev", rev), store.NumBelow("rev", rev+1))
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("projects: update: %w", err)
		}
		return p, nil
	}
	return nil, apierr.New(apierr.Conflict, "The project changed concurrently; retry.")
}
