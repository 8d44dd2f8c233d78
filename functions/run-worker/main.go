// Command run-worker is the Lambda function fed by the runs queue: it
// executes each durable run once through the invoke pipeline, on the
// authority of the key that created it, keeps the output as an artifact,
// reschedules a transient upstream failure with backoff through the
// message's visibility, and answers with the batch's failed items only.
package main

import (
	"log/slog"

	"platformapi/shared/app"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeWorker("run-worker", func(rt *app.Runtime, logger *slog.Logger) (lambdaedge.Batcher, error) {
		return rt.RunWorker(logger)
	})
}
