// Package dbsetup builds the managed-databases service on AWS for the two
// Lambda functions that use it (the databases group and its worker): the
// SQLite files in the archives bucket (versioned) behind DynamoDB heads,
// the Lambda's /tmp as read cache and scratch space, and the archive
// signing key derived from its Secrets Manager secret.
package dbsetup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/archivekey"
	"platformapi/shared/groups/databases/dbstore"
)

// Service builds the service on st and the archives bucket, with tmp as
// its local directory (/tmp on Lambda).
func Service(ctx context.Context, env *awsenv.Env, st store.Store, tmp string) (*databases.Service, error) {
	signer, err := archivekey.Signer(ctx, env)
	if err != nil {
		return nil, err
	}
	bucket := s3blob.New(env.S3(), env.Names.ArchivesBucket)
	files, err := dbstore.NewRemote(st, bucket, filepath.Join(tmp, "database-cache"))
	if err != nil {
		return nil, fmt.Errorf("dbsetup: %w", err)
	}
	scratch := filepath.Join(tmp, "database-scratch")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, err
	}
	return databases.New(st, files, bucket, signer, scratch, time.Now, databases.DefaultLimits), nil
}
