// Package dbstore keeps the SQLite files of managed databases. Storage is
// the port; Embedded (one live file per database under a directory) and
// Remote (one blob per version plus a head item with a single-writer lease,
// built only on the store and blob ports) are its adapters. Every write is
// one SQLite transaction that also advances the database's version, which is
// kept inside the file itself (PRAGMA user_version) so a file always knows
// which version it is.
package dbstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"platformapi/shared/groups/databases/engine"
)

// DefaultMaxBytes is the size cap of one database.
const DefaultMaxBytes = 256 << 20

// ErrFull means a write would grow the database beyond its cap.
var ErrFull = errors.New("dbstore: database full")

// BusyError means another writer holds the database; retry after the delay.
type BusyError struct{ RetryAfter time.Duration }

func (e *BusyError) Error() string { return "dbstore: database busy" }

// retryAfter is how long a writer refused as busy should wait.
const retryAfter = time.Second

// Stat describes a database's current state.
type Stat struct {
	Version   int64
	SizeBytes int64
}

// ReadFunc reads through a read-only connection at a consistent version.
type ReadFunc func(c *engine.Conn, version int64) error

// WriteFunc changes the database inside the platform's transaction; an
// error rolls everything back.
type WriteFunc func(c *engine.Conn, version int64) error

// ErrUnchanged, returned by a WriteFunc, rolls its transaction back and makes
// Write succeed at the version it found: a write that changed nothing is
// no new version, so writers holding that version (ifVersion) go on.
var ErrUnchanged = errors.New("dbstore: unchanged")

// Storage is the port. A database that was never written is empty at
// version 0, so creating one needs no storage call (and a crash between the
// record and the storage leaves nothing half-made).
type Storage interface {
	Read(ctx context.Context, dbID string, fn ReadFunc) error
	// Write applies fn in one transaction and returns the new version.
	Write(ctx context.Context, dbID string, fn WriteFunc) (int64, error)
	// Snapshot writes a consistent copy of the current version to dst
	// (VACUUM INTO), without blocking writers, and returns its version.
	Snapshot(ctx context.Context, dbID, dst string) (int64, error)
	// Replace makes the SQLite file at src the database's next version,
	// atomically, and returns that version. src is consumed.
	Replace(ctx context.Context, dbID, src string) (int64, error)
	Stat(ctx context.Context, dbID string) (Stat, error)
	// Drop removes the database's files.
	Drop(ctx context.Context, dbID string) error
}

// applyWrite runs fn in an immediate transaction on c, bounded by maxBytes,
// and stamps the new version into the file before committing. When fn
// returns ErrUnchanged it rolls back and returns the version it found with
// ErrUnchanged.
func applyWrite(ctx context.Context, c *engine.Conn, maxBytes int64, fn WriteFunc) (int64, error) {
	pageSize, err := c.QueryInt(ctx, "PRAGMA page_size")
	if err != nil {
		return 0, err
	}
	if err := c.SetMaxPageCount(ctx, maxBytes/pageSize); err != nil {
		return 0, err
	}
	if err := c.Exec(ctx, "BEGIN IMMEDIATE"); err != nil {
		if engine.IsCode(err, engine.CodeBusy) {
			return 0, &BusyError{RetryAfter: retryAfter}
		}
		return 0, err
	}
	version, err := c.QueryInt(ctx, "PRAGMA user_version")
	if err == nil {
		err = fn(c, version)
	}
	if errors.Is(err, ErrUnchanged) {
		if rbErr := c.Exec(context.Background(), "ROLLBACK"); rbErr != nil {
			return 0, rbErr
		}
		return version, ErrUnchanged
	}
	if err == nil {
		err = c.Exec(ctx, fmt.Sprintf("PRAGMA user_version=%d", version+1))
	}
	if err == nil {
		err = c.Exec(ctx, "COMMIT")
	}
	if err != nil {
		if c.InTransaction() {
			if rbErr := c.Exec(context.Background(), "ROLLBACK"); rbErr != nil {
				return 0, errors.Join(err, rbErr)
			}
		}
		if engine.IsCode(err, engine.CodeFull) {
			return 0, ErrFull
		}
		return 0, err
	}
	return version + 1, nil
}

// readAt runs fn in a read transaction, so the version it reports is the
// one every row came from.
func readAt(ctx context.Context, c *engine.Conn, fn ReadFunc) error {
	if err := c.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	version, err := c.QueryInt(ctx, "PRAGMA user_version")
	if err == nil {
		err = fn(c, version)
	}
	if c.InTransaction() {
		if cerr := c.Exec(context.Background(), "COMMIT"); err == nil {
			err = cerr
		}
	}
	return err
}

// fileSize is the database's size from SQLite's own page accounting.
func fileSize(ctx context.Context, c *engine.Conn) (int64, error) {
	pages, err := c.QueryInt(ctx, "PRAGMA page_count")
	if err != nil {
		return 0, err
	}
	size, err := c.QueryInt(ctx, "PRAGMA page_size")
	return pages * size, err
}

// snapshotFile writes a consistent copy of the database file at path to dst
// with VACUUM INTO: one read transaction, so writers go on (WAL). It needs a
// read-write connection because the target inherits the connection's open
// flags; the connection writes nothing to path.
func snapshotFile(ctx context.Context, path, dst string) (int64, error) {
	c, err := engine.OpenExisting(path)
	if err != nil {
		return 0, err
	}
	err = c.Exec(ctx, "VACUUM INTO ?", dst)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	snap, err := engine.Open(dst, true)
	if err != nil {
		return 0, err
	}
	defer snap.Close()
	return snap.QueryInt(ctx, "PRAGMA user_version")
}

// stampVersion sets the version of a standalone file (an import about to
// become the database) and gives it the journal mode its adapter uses.
func stampVersion(ctx context.Context, path string, version int64, journal string) error {
	c, err := engine.Open(path, false)
	if err != nil {
		return err
	}
	err = c.Exec(ctx, fmt.Sprintf("PRAGMA user_version=%d; PRAGMA journal_mode=%s", version, journal))
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}
