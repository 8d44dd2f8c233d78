// Package archivekey loads the database-archive signing key on AWS, from the
// Secrets Manager secret CDK generates. It is apart from dbsetup so that
// the public function, which only publishes the public key in /health,
// links no SQLite.
package archivekey

import (
	"context"
	"errors"
	"os"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/secretseed"
	"platformapi/shared/groups/databases/archive"
)

// SecretEnv names the signing secret's ARN (CDK sets it).
const SecretEnv = "ARCHIVE_SIGNING_SECRET_ARN"

// Signer loads the archive signing key from the secret named by SecretEnv.
func Signer(ctx context.Context, env *awsenv.Env) (*archive.Signer, error) {
	arn := os.Getenv(SecretEnv)
	if arn == "" {
		return nil, errors.New("archivekey: " + SecretEnv + " is not set")
	}
	seed, err := secretseed.Load(ctx, env.Config, arn)
	if err != nil {
		return nil, err
	}
	return archive.NewSigner(seed)
}
