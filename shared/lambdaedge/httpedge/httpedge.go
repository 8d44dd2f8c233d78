// Package httpedge runs one endpoint group as an AWS Lambda function: API
// Gateway HTTP API events (payload format 2.0) in, the group's kernel
// behind them. It is the only part of the edge that links the HTTP kernel
// and huma; workers and scheduled functions use lambdaedge alone.
package httpedge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"platformapi/shared/api"
	"platformapi/shared/base/routes"
	"platformapi/shared/domain/audit"
	"platformapi/shared/lambdaedge"
)

// RequestTimeout is every HTTP function's request deadline: under the HTTP
// API's 30-second integration limit.
const RequestTimeout = 28 * time.Second

// Env is what an endpoint group's function builds at cold start: the shared
// environment and the kernel's configuration.
type Env struct {
	*lambdaedge.Env
	// Kernel is the kernel's configuration (the table, the logger, the
	// webhook publisher, and the envelope key where the function is
	// granted it); a group's setup may add to it, e.g. the keys function's
	// credit-token signer.
	Kernel api.Config
}

// Setup builds the function's group on its Deps, taken from the
// environment.
type Setup func(ctx context.Context, e *Env) (api.Group, error)

// Serve turns the process into the Lambda function of one endpoint group
// and never returns. Everything is built once, in the init phase, and a
// startup failure is fatal, as lambdaedge.Fail describes.
func Serve(group string, setup Setup) {
	logger := lambdaedge.NewLogger(group)
	k, err := build(context.Background(), logger, group, setup)
	if err != nil {
		lambdaedge.Fail(logger, err)
	}
	lambda.Start(httpadapter.NewV2(k.Handler()).ProxyWithContext)
}

// build makes the kernel of one group. A group outside the route table is
// refused before anything is opened, so a misspelt main fails at deploy
// time instead of answering 404 to every request.
func build(ctx context.Context, logger *slog.Logger, group string, setup Setup) (*api.Kernel, error) {
	if len(routes.OfGroup(group)) == 0 {
		return nil, fmt.Errorf("httpedge: unknown endpoint group %q", group)
	}
	base, err := lambdaedge.NewEnv(ctx, logger)
	if err != nil {
		return nil, err
	}
	e := &Env{Env: base, Kernel: api.Config{
		Store: base.Store, Logger: logger, Sealer: base.Sealer,
		Groups: []string{group}, RequestTimeout: RequestTimeout, ClientIP: SourceIP,
		// Every request's audit event is one line on standard output,
		// off the request's round trips: the log group's subscription
		// carries it to audit-ingest, the table's stream to audit-rollup.
		Audit: audit.NewShippingRecorder(os.Stdout, nil),
	}}
	if e.Events != nil {
		e.Kernel.Events = e.Events
	}
	g, err := setup(ctx, e)
	if err != nil {
		return nil, err
	}
	return api.NewWith(e.Kernel, []api.Group{g})
}

// SourceIP is the client address API Gateway saw (the HTTP API's request
// context, which httpadapter.NewV2 puts in the request's context): behind
// API Gateway the socket is API Gateway's, and X-Forwarded-For is written
// by the client. Without a context (or with a malformed address) it is the
// zero Addr, which no key's allowedIps admits.
func SourceIP(r *http.Request) netip.Addr {
	c, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok {
		return netip.Addr{}
	}
	a, _ := netip.ParseAddr(c.HTTP.SourceIP)
	return a.Unmap()
}
