package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/archive"
	"platformapi/shared/groups/databases/archivekey"
	"platformapi/shared/groups/databases/dbstore"
)

// openDatabases builds the managed-databases service: the embedded storage
// (one SQLite file per database under DATA_DIR/databases, transfer parts and
// archives under DATA_DIR/database-archives) or, with BACKEND=aws, the
// remote storage (files in the archives bucket, heads in the table, a local
// cache under DATA_DIR/database-cache).
func openDatabases(ctx context.Context, c Config, rt *Runtime) error {
	signer, err := archiveSigner(ctx, c, rt.AWS)
	if err != nil {
		return fmt.Errorf("app: archive signing key: %w", err)
	}
	var files dbstore.Storage
	var bucket blob.Bucket
	if rt.AWS == nil {
		emb, err := dbstore.NewEmbedded(filepath.Join(c.DataDir, "databases"), dbstore.DefaultMaxBytes)
		if err != nil {
			return fmt.Errorf("app: databases: %w", err)
		}
		rt.closers = append(rt.closers, emb.Close)
		fb, err := fsblob.Open(filepath.Join(c.DataDir, "database-archives"))
		if err != nil {
			return fmt.Errorf("app: database archives: %w", err)
		}
		rt.closers = append(rt.closers, fb.Close)
		files, bucket = emb, fb
	} else {
		bucket = s3blob.New(rt.AWS.S3(), rt.AWS.Names.ArchivesBucket)
		remote, err := dbstore.NewRemote(rt.Store, bucket, filepath.Join(c.DataDir, "database-cache"))
		if err != nil {
			return fmt.Errorf("app: databases: %w", err)
		}
		rt.closers = append(rt.closers, remote.Close)
		files = remote
	}
	scratch := filepath.Join(c.DataDir, "database-scratch")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return err
	}
	rt.Resources.ArchiveKey = signer.PublicKey()
	rt.Resources.Databases = databases.New(rt.Store, files, bucket, signer, scratch, time.Now, databases.DefaultLimits)
	return nil
}

// archiveSigner loads the signing key from Secrets Manager when the secret
// is configured (BACKEND=aws with ARCHIVE_SIGNING_SECRET_ARN), else from the
// seed file DATA_DIR/archive-signing.key, created once with mode 0600.
func archiveSigner(ctx context.Context, c Config, env *awsenv.Env) (*archive.Signer, error) {
	if env != nil && os.Getenv(archivekey.SecretEnv) != "" {
		return archivekey.Signer(ctx, env)
	}
	if inLambda() {
		return nil, errors.New(archivekey.SecretEnv + " is not set")
	}
	seed, err := credittoken.LoadOrCreateSeed(filepath.Join(c.DataDir, "archive-signing.key"))
	if err != nil {
		return nil, err
	}
	return archive.NewSigner(seed)
}
