package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/apierr"
	"platformapi/shared/invoke"
	"platformapi/shared/routes"
	"platformapi/shared/runs"
	"platformapi/shared/upstream"
)

// registerRuns registers the run and artifact endpoints of spec 4.6.
//
// A key sees the runs and artifacts of its account in its project scope (a
// project-bound key or X-Service-Project: that project's only) whose source
// service it may reach (spec 4.6: reads also require service access).
// Anything else is 404 not_found, never 403 service_denied, so that a key
// cannot learn what exists behind a service it may not use (CONTRACT
// "Errors": not_found covers a resource the key may not see). Cancelling
// follows the same visibility.
//
// An artifact's content is always streamed by the API, never redirected to
// a presigned bucket URL: every download then passes the whole request path
// (a key revoked a moment ago cannot fetch it through a URL handed out
// before), the embedded and AWS backends answer alike, and run outputs are
// small (an upstream answer is at most 1 MiB).
func (s *Server) registerRuns(done map[string]bool) {
	register(s, done, "POST /runs", http.StatusAccepted, s.createRun)
	register(s, done, "GET /runs", http.StatusOK, s.listRuns)
	register(s, done, "GET /runs/{runId}", http.StatusOK, s.readRun)
	register(s, done, "POST /runs/{runId}/cancel", http.StatusOK, s.cancelRun)
	register(s, done, "GET /artifacts", http.StatusOK, s.listArtifacts)
	s.registerArtifactContent(done)
}

// runRepo is the run repository on the server's dependencies; it holds no
// state of its own, so building it per request costs nothing.
func (s *Server) runRepo() *runs.Repo {
	return runs.NewRepo(runs.Config{Store: s.deps.Store, Queue: s.deps.RunsQueue, Artifacts: s.deps.Artifacts, Now: s.now})
}

// viewer is the principal as the runs domain sees it.
func viewer(p *Principal) runs.Viewer {
	k := p.Key()
	return runs.Viewer{AccountID: k.AccountID, ProjectID: p.ProjectID, AllowsService: k.AllowsService}
}

type createRunRequest struct {
	ServiceID   string          `json:"serviceId" minLength:"1" doc:"The managed service"`
	OperationID string          `json:"operationId" minLength:"1" maxLength:"100" doc:"A durable operation of it (a capability with durable: true), e.g. memory.search"`
	Input       json.RawMessage `json:"input,omitempty" doc:"The operation's input (see the capability's inputSchema), at most 256 KiB of JSON"`
	ApprovalID  string          `json:"approvalId,omitempty" doc:"An approved, unused approval for exactly this service, operation and input (approval-gated operations); consumed when the run executes"`
}

type runOutput struct {
	Location string `header:"Location" doc:"The run's URL"`
	Body     *runs.Run
}

// createRun accepts a run: 202 with the queued run, executed later by the
// run worker on the authority of the calling key. Credits are held and
// charged when it executes, not now.
func (s *Server) createRun(ctx context.Context, in *body[createRunRequest]) (*runOutput, error) {
	if s.deps.RunsQueue == nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "Durable runs are not available on this deployment.").WithHeader("Retry-After", "3600")
	}
	b := in.Body
	if err := runs.Validate(b.ServiceID, b.OperationID, b.Input, b.ApprovalID); err != nil {
		return nil, err
	}
	if s.deps.Services[b.ServiceID] == nil {
		return nil, invoke.UpstreamError(upstream.ErrNotConfigured)
	}
	p := principal(ctx)
	run, err := s.runRepo().Create(ctx, runs.NewRun{
		AccountID: p.Key().AccountID, ProjectID: p.ProjectID, EndUser: p.EndUser, KeyID: p.Key().ID,
		ServiceID: b.ServiceID, OperationID: b.OperationID, Input: b.Input, ApprovalID: b.ApprovalID,
	})
	if err != nil {
		return nil, err
	}
	return &runOutput{Location: "/" + APIVersion + "/runs/" + run.ID, Body: run}, nil
}

type listRunsInput struct {
	Status string `query:"status" enum:"queued,running,succeeded,failed,cancelled" doc:"Only runs in this status"`
	ListInput
}

// listRuns lists visible runs, newest first.
func (s *Server) listRuns(ctx context.Context, in *listRunsInput) (*body[Page[*runs.Run]], error) {
	list, next, err := s.runRepo().List(ctx, viewer(principal(ctx)), in.Status, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return &body[Page[*runs.Run]]{Body: page(list, next)}, nil
}

type runIDInput struct {
	RunID string `path:"runId" doc:"Run id (run_…)"`
}

func (s *Server) readRun(ctx context.Context, in *runIDInput) (*body[*runs.Run], error) {
	run, err := s.runRepo().Get(ctx, viewer(principal(ctx)), in.RunID)
	if err != nil {
		return nil, err
	}
	return &body[*runs.Run]{Body: run}, nil
}

// cancelRun cancels a queued run, or flags a running one so that it is not
// retried; a finished run is a 409 conflict.
func (s *Server) cancelRun(ctx context.Context, in *runIDInput) (*body[*runs.Run], error) {
	run, err := s.runRepo().Cancel(ctx, viewer(principal(ctx)), in.RunID)
	if err != nil {
		return nil, err
	}
	return &body[*runs.Run]{Body: run}, nil
}

type listArtifactsInput struct {
	RunID string `query:"runId" maxLength:"64" doc:"Only this run's artifacts"`
	ListInput
}

// listArtifacts lists visible artifacts, newest first.
func (s *Server) listArtifacts(ctx context.Context, in *listArtifactsInput) (*body[Page[*runs.Artifact]], error) {
	list, next, err := s.runRepo().ListArtifacts(ctx, viewer(principal(ctx)), in.RunID, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return &body[Page[*runs.Artifact]]{Body: page(list, next)}, nil
}

// registerArtifactContent registers the download like register does, with
// its raw response documented: huma cannot infer it from a stream.
func (s *Server) registerArtifactContent(done map[string]bool) {
	const route = "GET /artifacts/{artifactId}/content"
	for _, rt := range routes.Table {
		if rt.Method+" "+rt.Path != route || !s.mountedGroup(rt.Group) {
			continue
		}
		op := operation(rt, false)
		op.Description = "Streams the content through the API, never as a redirect to a presigned bucket URL, so every download passes authentication and the access controls; `X-Content-Sha256` is the SHA-256 recorded when the artifact was written. An artifact whose run's service the key may not use, or of another project, is `404 not_found`.\n\n" + op.Description
		op.Responses = map[string]*huma.Response{"200": {
			Description: "The artifact's bytes, in its contentType (application/json for a run's output).",
			Headers: map[string]*huma.Param{
				"X-Content-Sha256": {Description: "SHA-256 of the content, lowercase hex", Schema: &huma.Schema{Type: "string"}},
				"Content-Length":   {Description: "Size in bytes", Schema: &huma.Schema{Type: "integer"}},
			},
			Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{}}},
		}}
		huma.Register(s.api, op, s.downloadArtifact)
		done[route] = true
	}
}

type artifactIDInput struct {
	ArtifactID string `path:"artifactId" doc:"Artifact id (art_…)"`
}

// downloadArtifact streams an artifact's bytes with its checksum.
func (s *Server) downloadArtifact(ctx context.Context, in *artifactIDInput) (*huma.StreamResponse, error) {
	if s.deps.Artifacts == nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "Artifacts are not available on this deployment.").WithHeader("Retry-After", "3600")
	}
	rc, a, err := s.runRepo().OpenArtifact(ctx, viewer(principal(ctx)), in.ArtifactID)
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
			loggerFrom(ctx).Error("artifact download interrupted", "artifactId", a.ID, "error", err.Error())
		}
	}}, nil
}
