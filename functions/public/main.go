// Command public is the Lambda function of the endpoints that need no key:
// /health, /openapi.json (the document embedded at build time), /pricing and
// /docs, at the root and under /v1, and the API's catch-all (404 and 405).
package main

import (
	"context"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/groups/databases/archivekey"
	"platformapi/shared/groups/public/publicapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("public", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		d := publicapi.Deps{Backend: "aws"}
		// /health publishes the database archive key when the function is
		// granted its secret (one read at cold start).
		if os.Getenv(archivekey.SecretEnv) != "" {
			signer, err := archivekey.Signer(ctx, e.AWS)
			if err != nil {
				return api.Group{}, err
			}
			d.ArchivePublicKey = signer.PublicKey()
		}
		return publicapi.New(d), nil
	})
}
