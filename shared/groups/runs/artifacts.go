package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/paging"
)

// Artifact is a file a run produced; today, its output.
type Artifact struct {
	ID          string    `json:"id" doc:"Artifact id (art_…)"`
	RunID       string    `json:"runId"`
	ServiceID   string    `json:"serviceId" doc:"The service whose run produced it; reading it requires access to that service"`
	OperationID string    `json:"operationId"`
	Name        string    `json:"name" doc:"output.json for a run's output"`
	ContentType string    `json:"contentType"`
	SizeBytes   int64     `json:"sizeBytes"`
	SHA256      string    `json:"sha256" doc:"SHA-256 of the content, lowercase hex; also X-Content-Sha256 on download"`
	ProjectID   *string   `json:"projectId"`
	CreatedAt   time.Time `json:"createdAt"`
}

// OutputName is the name of a run's output artifact.
const OutputName = "output.json"

func artifactKey(accountID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "art#" + id}
}

func blobKey(accountID, id string) string { return "artifacts/" + accountID + "/" + id }

func decodeArtifact(it store.Item) (*Artifact, error) {
	var a Artifact
	if err := it.Doc(&a); err != nil {
		return nil, fmt.Errorf("runs: decode artifact %s: %w", it.Key(), err)
	}
	return &a, nil
}

// putOutput writes a run's output to the bucket and returns its record and
// the transaction member that stores the record, so that the record appears
// in the same write that finishes the run. The bucket computes the SHA-256
// while writing; that is the one recorded.
func (r *Repo) putOutput(ctx context.Context, run *Run, output json.RawMessage) (*Artifact, store.Op, error) {
	now := r.now().UTC()
	id := ids.New("art", now)
	info, err := r.bucket.Put(ctx, blobKey(run.AccountID, id), bytes.NewReader(output), blob.PutOptions{ContentType: "application/json", IfNotExists: true})
	if err != nil {
		return nil, store.Op{}, fmt.Errorf("runs: store output of %s: %w", run.ID, err)
	}
	a := &Artifact{ID: id, RunID: run.ID, ServiceID: run.ServiceID, OperationID: run.OperationID, Name: OutputName,
		ContentType: "application/json", SizeBytes: info.Size, SHA256: info.SHA256, ProjectID: run.ProjectID, CreatedAt: now}
	it := store.NewItem(artifactKey(run.AccountID, id))
	it.SetDoc(a)
	return a, store.PutOp(it, store.NotExists()), nil
}

var errNoArtifact = apierr.New(apierr.NotFound, "No such artifact.")

// GetArtifact reads an artifact the viewer may see; any other is not_found.
func (r *Repo) GetArtifact(ctx context.Context, v Viewer, id string) (*Artifact, error) {
	if !ids.Valid("art", id) {
		return nil, errNoArtifact
	}
	it, err := r.st.Get(ctx, artifactKey(v.AccountID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoArtifact
	}
	if err != nil {
		return nil, fmt.Errorf("runs: get artifact: %w", err)
	}
	a, err := decodeArtifact(it)
	if err != nil {
		return nil, err
	}
	if !v.sees(a.ProjectID, a.ServiceID) {
		return nil, errNoArtifact
	}
	return a, nil
}

// OpenArtifact opens the content of an artifact the viewer may see; the
// caller closes it. Content whose stored checksum is not the recorded one
// is refused rather than served.
func (r *Repo) OpenArtifact(ctx context.Context, v Viewer, id string) (io.ReadCloser, *Artifact, error) {
	a, err := r.GetArtifact(ctx, v, id)
	if err != nil {
		return nil, nil, err
	}
	rc, info, err := r.bucket.Get(ctx, blobKey(v.AccountID, id))
	if err != nil {
		return nil, nil, fmt.Errorf("runs: open artifact %s: %w", id, err)
	}
	if info.SHA256 != a.SHA256 {
		rc.Close()
		return nil, nil, fmt.Errorf("runs: artifact %s: stored checksum %s, recorded %s", id, info.SHA256, a.SHA256)
	}
	return rc, a, nil
}

// ListArtifacts pages through the artifacts the viewer may see, newest
// first; with runID, only that run's (none when the run is not visible).
func (r *Repo) ListArtifacts(ctx context.Context, v Viewer, runID string, limit int, cursor string) ([]*Artifact, string, error) {
	keep := func(it store.Item) (*Artifact, bool, error) {
		a, err := decodeArtifact(it)
		if err != nil {
			return nil, false, err
		}
		return a, v.sees(a.ProjectID, a.ServiceID), nil
	}
	if runID == "" {
		out, next, err := scan(ctx, r.st, v.AccountID, "art#", limit, cursor, keep)
		if err != nil {
			return nil, "", fmt.Errorf("runs: list artifacts: %w", err)
		}
		return out, next, nil
	}
	after, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	run, err := r.Get(ctx, v, runID)
	if errors.Is(err, errNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return r.runArtifacts(ctx, run, after, limit, keep)
}

// runArtifacts pages through a run's artifacts by their ids, without
// reading the rest of the account's.
func (r *Repo) runArtifacts(ctx context.Context, run *Run, after string, limit int, keep func(store.Item) (*Artifact, bool, error)) ([]*Artifact, string, error) {
	var wanted []store.Key
	for _, id := range slices.Backward(slices.Sorted(slices.Values(run.ArtifactIDs))) {
		if k := artifactKey(run.AccountID, id); after == "" || k.SK < after {
			wanted = append(wanted, k)
		}
	}
	more := len(wanted) > limit
	wanted = wanted[:min(len(wanted), limit)]
	if len(wanted) == 0 {
		return nil, "", nil
	}
	got, err := r.st.BatchGet(ctx, wanted)
	if err != nil {
		return nil, "", fmt.Errorf("runs: list artifacts: %w", err)
	}
	var out []*Artifact
	for _, k := range wanted {
		if it, ok := got[k.String()]; ok {
			a, visible, err := keep(it)
			if err != nil {
				return nil, "", err
			}
			if visible {
				out = append(out, a)
			}
		}
	}
	if more {
		return out, paging.Cursor(wanted[len(wanted)-1].SK), nil
	}
	return out, "", nil
}
