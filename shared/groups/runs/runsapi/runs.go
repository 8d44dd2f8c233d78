// Package runsapi is the durable-runs and artifacts endpoint groups:
// runs are accepted here and executed by the run worker.
package runsapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/connections"
	"platformapi/shared/groups/runs"
	"platformapi/shared/groups/services/invoke"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
	// Queue carries durable runs to the run worker; nil: runs answer 503.
	Queue queue.Queue
	// Artifacts holds run artifacts; nil: downloads answer 503.
	Artifacts blob.Bucket
	// Services says which managed services this deployment reaches.
	Services upstream.Router
}

type handlers struct {
	d    Deps
	runs *runs.Repo
	// conns only checks connections (no opening, no writes): the run
	// worker opens them when the run executes.
	conns *connections.Repo
}

// Register adds the operations of both groups (runs, artifacts) to the
// kernel; each function serves its own.
//
// A key sees the runs and artifacts of its account in its project scope (a
// project-bound key or X-Service-Project: that project's only) whose source
// service it may reach (reads also require service access).
// Anything else is 404 not_found, never 403 service_denied, so that a key
// cannot learn what exists behind a service it may not use (not_found
// covers a resource the key may not see). Cancelling
// follows the same visibility.
//
// An artifact's content is always streamed by the API, never redirected to
// a presigned bucket URL: every download then passes the whole request path
// (a key revoked a moment ago cannot fetch it through a URL handed out
// before), the embedded and AWS backends answer alike, and run outputs are
// small (an upstream answer is at most 1 MiB).
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{d: d, runs: runs.NewRepo(runs.Config{Store: d.Store, Queue: d.Queue, Artifacts: d.Artifacts, Now: k.Now}),
		conns: connections.NewRepo(d.Store, nil, k.Now)}
	api.Register(k, "runs.create", http.StatusAccepted, h.create)
	api.Register(k, "runs.list", http.StatusOK, h.list)
	api.Register(k, "runs.read", http.StatusOK, h.read)
	api.Register(k, "runs.cancel", http.StatusOK, h.cancel)
	api.Register(k, "artifacts.list", http.StatusOK, h.listArtifacts)
	api.Register(k, "artifacts.content.read", http.StatusOK, h.download, api.Describe("Streams the content through the API, never as a redirect to a presigned bucket URL, so every download passes authentication and the access controls; `X-Content-Sha256` is the SHA-256 recorded when the artifact was written. An artifact whose run's service the key may not use, or of another project, is `404 not_found`."), func(op *huma.Operation) {
		op.Responses = map[string]*huma.Response{"200": {
			Description: "The artifact's bytes, in its contentType (application/json for a run's output).",
			Headers: map[string]*huma.Param{
				"X-Content-Sha256": {Description: "SHA-256 of the content, lowercase hex", Schema: &huma.Schema{Type: "string"}},
				"Content-Length":   {Description: "Size in bytes", Schema: &huma.Schema{Type: "integer"}},
			},
			Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{}}},
		}}
	})
	return nil
}

// viewer is the principal as the runs domain sees it.
func viewer(ctx context.Context) runs.Viewer {
	p := api.PrincipalFrom(ctx)
	k := p.Key()
	return runs.Viewer{AccountID: k.AccountID, ProjectID: p.ProjectID, AllowsService: k.AllowsService}
}

type createRunRequest struct {
	ServiceID   string            `json:"serviceId" minLength:"1" doc:"The managed service"`
	OperationID string            `json:"operationId" minLength:"1" maxLength:"100" doc:"A durable operation of it (a capability with durable: true), e.g. memory.search"`
	Input       json.RawMessage   `json:"input,omitempty" doc:"The operation's input (see the capability's inputSchema), at most 256 KiB of JSON"`
	ApprovalID  string            `json:"approvalId,omitempty" doc:"An approved, unused approval for exactly this service, operation and input (approval-gated operations); consumed when the run executes"`
	Connections map[string]string `json:"connections,omitempty" maxProperties:"8" doc:"Protected connections the service uses, by slot: {\"<slot>\": \"con_…\"}. Checked now (same account and project, active, this service in serviceIds) and again when the run executes. The run executes with the credentials current now while a rotation keeps them (24 hours), then with the current ones."`
}

type runOutput struct {
	Location string `header:"Location" doc:"The run's URL"`
	Body     *runs.Run
}

// createRun accepts a run: 202 with the queued run, executed later by the
// run worker on the authority of the calling key. Credits are held and
// charged when it executes, not now.
func (h *handlers) create(ctx context.Context, in *api.Body[createRunRequest]) (*runOutput, error) {
	if h.d.Queue == nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "Durable runs are not available on this deployment.").WithHeader("Retry-After", "3600")
	}
	b := in.Body
	if err := runs.Validate(b.ServiceID, b.OperationID, b.Input, b.ApprovalID); err != nil {
		return nil, err
	}
	if h.d.Services[b.ServiceID] == nil {
		return nil, invoke.UpstreamError(upstream.ErrNotConfigured)
	}
	p := api.PrincipalFrom(ctx)
	versions, err := h.conns.Check(ctx, p.Key().AccountID, p.ProjectID, b.ServiceID, b.Connections)
	if err != nil {
		return nil, err
	}
	run, err := h.runs.Create(ctx, runs.NewRun{
		AccountID: p.Key().AccountID, ProjectID: p.ProjectID, EndUser: p.EndUser, KeyID: p.Key().ID,
		ServiceID: b.ServiceID, OperationID: b.OperationID, Input: b.Input, ApprovalID: b.ApprovalID,
		Connections: b.Connections, ConnectionVersions: versions, CallID: api.CallID(ctx),
	})
	if err != nil {
		return nil, err
	}
	return &runOutput{Location: "/" + api.APIVersion + "/runs/" + run.ID, Body: run}, nil
}

type listRunsInput struct {
	Status string `query:"status" enum:"queued,running,succeeded,failed,cancelled" doc:"Only runs in this status"`
	api.ListInput
}

// listRuns lists visible runs, newest first.
func (h *handlers) list(ctx context.Context, in *listRunsInput) (*api.Body[api.Page[*runs.Run]], error) {
	list, next, err := h.runs.List(ctx, viewer(ctx), in.Status, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(list, next)), nil
}

type runIDInput struct {
	RunID string `path:"runId" doc:"Run id (run_…)"`
}

func (h *handlers) read(ctx context.Context, in *runIDInput) (*api.Body[*runs.Run], error) {
	run, err := h.runs.Get(ctx, viewer(ctx), in.RunID)
	if err != nil {
		return nil, err
	}
	return api.Reply(run), nil
}

// cancelRun cancels a queued run, or flags a running one so that it is not
// retried; a finished run is a 409 conflict.
func (h *handlers) cancel(ctx context.Context, in *runIDInput) (*api.Body[*runs.Run], error) {
	run, err := h.runs.Cancel(ctx, viewer(ctx), in.RunID)
	if err != nil {
		return nil, err
	}
	return api.Reply(run), nil
}

type listArtifactsInput struct {
	RunID string `query:"runId" maxLength:"64" doc:"Only this run's artifacts"`
	api.ListInput
}

// listArtifacts lists visible artifacts, newest first.
func (h *handlers) listArtifacts(ctx context.Context, in *listArtifactsInput) (*api.Body[api.Page[*runs.Artifact]], error) {
	list, next, err := h.runs.ListArtifacts(ctx, viewer(ctx), in.RunID, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(list, next)), nil
}

type artifactIDInput struct {
	ArtifactID string `path:"artifactId" doc:"Artifact id (art_…)"`
}

// downloadArtifact streams an artifact's bytes with its checksum.
func (h *handlers) download(ctx context.Context, in *artifactIDInput) (*huma.StreamResponse, error) {
	if h.d.Artifacts == nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "Artifacts are not available on this deployment.").WithHeader("Retry-After", "3600")
	}
	rc, a, err := h.runs.OpenArtifact(ctx, viewer(ctx), in.ArtifactID)
	if err != nil {
		return nil, err
	}
	return &huma.StreamResponse{Body: func(hc huma.Context) {
		defer rc.Close()
		hc.SetHeader("Content-Type", a.ContentType)
		hc.SetHeader("Content-Length", strconv.FormatInt(a.SizeBytes, 10))
		hc.SetHeader("Content-Disposition", `attachment; filename="`+a.Name+`"`)
		hc.SetHeader("X-Content-Sha256", a.SHA256)
		hc.SetHeader("Cache-Control", "private, no-store")
		hc.SetStatus(http.StatusOK)
		if _, err := io.Copy(hc.BodyWriter(), rc); err != nil {
			api.Logger(ctx).Error("artifact download interrupted", "artifactId", a.ID, "error", err.Error())
		}
	}}, nil
}
