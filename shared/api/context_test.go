package api_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/api"
	"platformapi/shared/base/routes"
	"platformapi/shared/harness/apitest"
)

var ctxProbe = routes.Route{
	Method: http.MethodGet, Path: "/test/context", Group: "test", Operation: "test.context.read", ID: "test.context.read",
	Summary: "Report the operation's context",
}

type ctxProbeOut struct {
	Body struct {
		HasDeadline bool `json:"hasDeadline"`
	}
}

// An operation runs within the request's deadline and sees its context
// cancelled once the request is answered, as under the context.WithTimeout
// the kernel made before; the request's values (its id, its principal)
// are there.
func TestAnOperationRunsWithinTheRequestDeadlineAndIsCancelledAfterIt(t *testing.T) {
	type seen struct {
		ctx      context.Context
		child    context.Context
		deadline time.Time
		ok       bool
		id       string
		caller   *api.Principal
		live     error
	}
	var got seen
	e := apitest.New(t, apitest.Options{Routes: []routes.Route{ctxProbe}, Register: func(k *api.Kernel) {
		api.Register(k, ctxProbe.ID, http.StatusOK, func(ctx context.Context, _ *struct{}) (*ctxProbeOut, error) {
			got.ctx, got.id, got.caller, got.live = ctx, api.RequestID(ctx), api.PrincipalFrom(ctx), ctx.Err()
			got.deadline, got.ok = ctx.Deadline()
			var cancel context.CancelFunc
			got.child, cancel = context.WithCancel(ctx)
			t.Cleanup(cancel)
			out := &ctxProbeOut{}
			out.Body.HasDeadline = got.ok
			return out, nil
		})
	}})
	root, _ := e.RootKey(1, nil)
	before := time.Now()
	r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/test/context", Key: root}), 200)
	if !got.ok || got.deadline.Before(before) || got.live != nil {
		t.Fatalf("operation's deadline %v (set %v), error %v", got.deadline, got.ok, got.live)
	}
	if got.id == "" || got.id != r.Header.Get("X-Request-Id") || got.caller == nil || got.caller.Key() == nil {
		t.Fatalf("request id %q (header %q), principal %v", got.id, r.Header.Get("X-Request-Id"), got.caller)
	}
	for name, ctx := range map[string]context.Context{"operation": got.ctx, "child": got.child} {
		select {
		case <-ctx.Done():
		default:
			t.Fatalf("%s context still live after the answer", name)
		}
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Fatalf("%s context: %v", name, ctx.Err())
		}
	}
}

var slowWrite = routes.Route{
	Method: http.MethodPost, Path: "/test/slow", Group: "test", Operation: "test.slow.create", ID: "test.slow.create", Body: routes.BodyJSON,
	Summary: "Run for a while with a body",
}

type slowIn struct {
	Body struct {
		Millis int `json:"millis"`
	}
}

type slowOut struct {
	Body struct {
		Cancelled string `json:"cancelled"`
	}
}

// An operation with a body keeps its context for as long as it runs
// within the request's deadline: a read deadline set on the connection for
// the body (the router's default is 5 s) must not outlive it and cancel
// the request's context through the server's background read.
func TestAnOperationWithABodyKeepsItsContextPastFiveSeconds(t *testing.T) {
	e := apitest.New(t, apitest.Options{Routes: []routes.Route{slowWrite}, Register: func(k *api.Kernel) {
		api.Register(k, slowWrite.ID, http.StatusOK, func(ctx context.Context, in *slowIn) (*slowOut, error) {
			out := &slowOut{}
			select {
			case <-ctx.Done():
				out.Body.Cancelled = context.Cause(ctx).Error()
			case <-time.After(time.Duration(in.Body.Millis) * time.Millisecond):
			}
			return out, nil
		})
	}})
	if d := apitest.RequestTimeout(teststores.Embedded); d < 6*time.Second {
		t.Fatalf("the test server's request deadline %v leaves no room past 5 s", d)
	}
	root, _ := e.RootKey(1, nil)
	r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/test/slow", Key: root, Body: map[string]any{"millis": 5500}}), 200)
	if c := r.Str("cancelled"); c != "" {
		t.Fatalf("the operation's context was cancelled before 5.5 s: %s", c)
	}
}

var lateEvent = routes.Route{
	Method: http.MethodPost, Path: "/test/late-event", Group: "test", Operation: "test.late-event.create", ID: "test.late-event.create",
	Idem: true, Body: routes.BodyJSON, Summary: "Publish an event once the request's context has ended",
}

// An operation's event is recorded even when the request's context has
// ended by the time it is published: the write it announces has committed,
// so a request that ran past its deadline (a slow service, a busy store)
// must not answer its effect and drop its event.
func TestAnEventPublishedAfterTheRequestsDeadlineIsStillRecorded(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"url": "https://93.184.216.34/in", "events": []string{"service.invoked"}}}), 201)
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/test/late-event", Key: root, Idem: apitest.Idem(), Body: map[string]any{}}), 200)
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhook-deliveries", Key: root}), 200)
		if n := len(r.Body["data"].([]any)); n != 1 {
			t.Fatalf("%d deliveries of the late event, want 1: %v", n, r.Body)
		}
	}, apitest.Options{Routes: []routes.Route{lateEvent}, Register: func(k *api.Kernel) {
		api.Register(k, lateEvent.ID, http.StatusOK, func(ctx context.Context, _ *struct{ Body struct{} }) (*struct{}, error) {
			ended, cancel := context.WithCancel(ctx)
			cancel()
			k.Publish(ended, "service.invoked", map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.write", "chargedCredits": 0.01})
			return &struct{}{}, nil
		})
	}})
}
