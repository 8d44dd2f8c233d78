// Package lambdaedge runs one endpoint group as an AWS Lambda function behind
// an API Gateway HTTP API (payload format 2.0). It is the only code that knows
// about Lambda: every functions/<group>/main.go is one call to Serve, so a
// group's function runs exactly the handlers, policy and storage wiring that
// the local server runs. It must never keep request state between
// invocations; the only thing it holds across them is the runtime built at
// cold start.
package lambdaedge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"platformapi/shared/app"
	"platformapi/shared/routes"
)

// Serve turns the process into the Lambda function of one endpoint group
// and never returns.
//
// Everything is built once, in the init phase, because Lambda reuses a warm
// process for many invocations and bills and delays only the first: the
// configuration is read, storage opened and the group's routes (with their
// OpenAPI document) assembled before the first event, and nothing else is
// done up front. The runtime is never closed: Lambda freezes and then kills
// the process without warning, and both backends are safe against that.
//
// A startup failure is fatal. It is logged as one JSON line (the whole
// CloudWatch record of the failed init), reported to the Runtime API as an
// init error so that Lambda names the cause rather than a bare exit status,
// and the process exits non-zero; Lambda then retries init on the next
// event instead of serving from a half-built runtime.
func Serve(group string) {
	cfg := app.ConfigFromEnv()
	logger := cfg.Logger().With(slog.String("function", group))
	handler, err := build(context.Background(), cfg, logger, group)
	if err != nil {
		logger.Error("startup failed", slog.String("error", err.Error()))
		reportInitError(err)
		os.Exit(1)
	}
	lambda.Start(httpadapter.NewV2(handler).ProxyWithContext)
}

// build opens the runtime and the server of one group. A group outside the
// route table is refused, so a misspelt main fails at deploy time instead of
// answering 404 to every request.
func build(ctx context.Context, cfg app.Config, logger *slog.Logger, group string) (http.Handler, error) {
	if !slices.Contains(routes.Groups(), group) && group != routes.MCP.Group {
		return nil, fmt.Errorf("lambdaedge: unknown endpoint group %q", group)
	}
	rt, err := app.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	srv, err := rt.NewServer(logger, []string{group})
	if err != nil {
		_ = rt.Close()
		return nil, err
	}
	return srv, nil
}
