// Package usageapi is the usage and audit-events endpoint group:
// GET /audit-events lists the events the kernel records for every
// authenticated request, GET /usage sums them by hour or day. A key sees
// itself and its descendants; a project-bound key, or a request that
// selects a project with X-Service-Project, only that project. Both only
// read: the events are written by the kernel (api.Config.Audit) and the
// counters by the rollup, never here.
package usageapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/domain/audit"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
}

type handlers struct {
	k    *api.Kernel
	repo *audit.Repo
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, repo: audit.NewRepo(d.Store, k.Now).ReadingAfter(k.FlushAudit)}
	api.Register(k, "auditEvents.list", http.StatusOK, h.list, api.Describe(listDoc), withExample(eventsExample))
	api.Register(k, "usage.read", http.StatusOK, h.usage, api.Describe(usageDoc), withExample(usageExample))
	return nil
}

const listDoc = "One event per authenticated request that reached the access controls, denied ones (403, 429, 402) " +
	"included, newest first. An event never holds a body, a secret, a token or an `Authorization` header; `endUser` " +
	"follows the calling key's privacy tier. A key sees the events of itself and its descendants; a project-bound " +
	"key (or a request with `X-Service-Project`) only that project's. `operation` is the route's operation, refined " +
	"to `services.invoke.<serviceId>.<operationId>` (and `runs.create.…`) for invokes and runs; filtering by " +
	"`services.invoke` covers them all. Events are kept 90 days. A page may hold fewer than `limit` events (a narrow " +
	"filter reads at most 1,000 events per page): follow `nextCursor` until it is null."

const usageDoc = "Requests, errors (status 400 or more) and charged credits of the audit events, summed per bucket " +
	"of an hour (`1h`, at most 168 per page) or a UTC day (`1d`, at most 31 per page), oldest first, empty buckets " +
	"included. `groupBy` splits each bucket by project, key, service and/or operation; dimensions not grouped by are " +
	"null. The sums equal what `GET /audit-events` lists for the same range and viewer once the rollup has counted " +
	"the events (normally within a second). `start` is floored and `end` ceiled to the bucket width; without " +
	"`start`, one page ending at `end` (default now). Same visibility as the audit events."

type listInput struct {
	Since     string `query:"since" maxLength:"64" doc:"Earliest occurrence, inclusive (RFC 3339); default: 90 days before until" example:"2026-01-02T00:00:00Z"`
	Until     string `query:"until" maxLength:"64" doc:"Latest occurrence, exclusive (RFC 3339); default: now" example:"2026-01-03T00:00:00Z"`
	KeyID     string `query:"keyId" maxLength:"64" doc:"Only the requests of this key (itself or a descendant)" example:"key_01JH0000000000000000000000"`
	Operation string `query:"operation" maxLength:"200" doc:"Only this operation, or the refinements of services.invoke / runs.create" example:"services.invoke"`
	Status    string `query:"status" maxLength:"3" doc:"Only responses with this HTTP status" example:"429"`
	api.ListInput
}

func viewer(ctx context.Context) audit.Viewer {
	p := api.PrincipalFrom(ctx)
	return audit.Viewer{AccountID: p.Key().AccountID, KeyPath: p.KeyPath(), ProjectID: p.ProjectID}
}

func (h *handlers) list(ctx context.Context, in *listInput) (*api.Body[api.Page[audit.Event]], error) {
	f, err := audit.ParseListQuery(viewer(ctx), audit.ListQuery{
		Since: in.Since, Until: in.Until, KeyID: in.KeyID, Operation: in.Operation, Status: in.Status,
		Limit: in.Limit, Cursor: in.Cursor,
	}, h.k.Now())
	if err != nil {
		return nil, err
	}
	evs, next, err := h.repo.List(ctx, f)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(evs, next)), nil
}

type usageInput struct {
	Start       string `query:"start" maxLength:"64" doc:"First bucket's time (RFC 3339), floored to the bucket width" example:"2026-01-01T00:00:00Z"`
	End         string `query:"end" maxLength:"64" doc:"End of the range (RFC 3339), ceiled to the bucket width; default now" example:"2026-01-08T00:00:00Z"`
	BucketWidth string `query:"bucketWidth" enum:"1h,1d" doc:"Bucket width; default 1d"`
	GroupBy     string `query:"groupBy" maxLength:"64" doc:"Comma-separated subset of project, key, service, operation" example:"service,operation"`
	Cursor      string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page"`
}

func (h *handlers) usage(ctx context.Context, in *usageInput) (*api.Body[api.Page[audit.UsageBucket]], error) {
	f, err := audit.ParseUsageQuery(viewer(ctx), audit.UsageQuery{
		Start: in.Start, End: in.End, BucketWidth: in.BucketWidth, GroupBy: in.GroupBy, Cursor: in.Cursor,
	}, h.k.Now())
	if err != nil {
		return nil, err
	}
	buckets, next, err := h.repo.Usage(ctx, f)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(buckets, next)), nil
}

// The examples of the 200 responses, as a client sees them.
var (
	eventsExample = map[string]any{
		"data": []any{map[string]any{
			"id": "aud_01JH2Q3R4S5T6V7W8X9Y0Z1A2B", "occurredAt": "2026-01-02T03:04:05.678Z", "requestId": "req_3f1c2a9b8e7d6c5b4a392817",
			"projectId": "prj_01JH0000000000000000000000", "keyId": "key_01JH0000000000000000000001",
			"operation": "services.invoke.core-research.search", "method": "POST", "path": "/v1/services/core-research/invoke",
			"status": 402, "code": "insufficient_credits", "chargedCredits": 0, "endUser": "anon_5d41402abc4b2a76b971",
			"idempotentReplayed": false,
		}},
		"nextCursor": "eyJhZnRlciI6IjIwMjYwMTAyfGF1ZF8wMUpIMlEzUjRTNVQ2VjdXOFg5WTBaMUEyQiJ9",
	}
	usageExample = map[string]any{
		"data": []any{map[string]any{
			"startTime": "2026-01-02T00:00:00Z", "endTime": "2026-01-03T00:00:00Z",
			"results": []any{map[string]any{
				"projectId": nil, "keyId": nil, "serviceId": "core-research", "operation": "services.invoke.core-research.search",
				"requests": 1200, "errors": 14, "chargedCredits": 36.5,
			}},
		}},
		"nextCursor": nil,
	}
)

// withExample sets the example of the operation's JSON 200 response.
func withExample(v any) func(*huma.Operation) {
	return func(op *huma.Operation) {
		if op.Responses == nil {
			op.Responses = map[string]*huma.Response{}
		}
		r := op.Responses["200"]
		if r == nil {
			r = &huma.Response{}
			op.Responses["200"] = r
		}
		if r.Content == nil {
			r.Content = map[string]*huma.MediaType{}
		}
		mt := r.Content["application/json"]
		if mt == nil {
			mt = &huma.MediaType{}
			r.Content["application/json"] = mt
		}
		mt.Example = v
	}
}
