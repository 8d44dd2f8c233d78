package databases

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/groups/databases/archive"
	"platformapi/shared/groups/databases/engine"
)

// Transfer statuses.
const (
	TransferPreparing     = "preparing"
	TransferReady         = "ready"
	TransferAwaitingParts = "awaiting_parts"
	TransferValidating    = "validating"
	TransferCompleted     = "completed"
	TransferFailed        = "failed"
	TransferCancelled     = "cancelled"
)

// Transfer is the resource.
type Transfer struct {
	ID          string     `json:"id"`
	Direction   string     `json:"direction" enum:"export,import"`
	Status      string     `json:"status"`
	PartCount   int        `json:"partCount"`
	SizeBytes   int64      `json:"sizeBytes"`
	SHA256      string     `json:"sha256"`
	Error       string     `json:"error"`
	CreatedAt   time.Time  `json:"createdAt"`
	CompletedAt *time.Time `json:"completedAt"`
	ExpiresAt   *time.Time `json:"expiresAt"`
}

// stored is the transfer's document: the resource plus what only the
// platform needs.
type stored struct {
	Transfer
	ProjectID  string `json:"projectId"`
	DatabaseID string `json:"databaseId"`
	Signature  string `json:"signature,omitempty"`
}

// CreateTransferRequest is the body of POST /databases/transfers.
type CreateTransferRequest struct {
	Direction string `json:"direction" enum:"export,import"`
	PartCount int    `json:"partCount,omitempty"`
	SHA256    string `json:"sha256,omitempty" doc:"Hex SHA-256 of the whole zip (import)"`
}

func transferKey(accountID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "dbt#" + id}
}

func partKey(id string, n int) string       { return fmt.Sprintf("db-transfers/%s/part-%06d", id, n) }
func archiveKey(id string) string           { return "db-transfers/" + id + "/archive.zip" }
func (s *Service) expiry() time.Time        { return s.now().Add(s.limits.TransferTTL).UTC() }
func scopeMatches(t *stored, sc Scope) bool { return t.ProjectID == sc.ProjectID }

var errNoTransfer = apierr.New(apierr.NotFound, "No such transfer.")

// CreateTransfer records an export (preparing; the caller enqueues
// RunExport) or an import (awaiting_parts). One Put, no read-back of what
// it writes: safe under idempotency.Deferring.
func (s *Service) CreateTransfer(ctx context.Context, sc Scope, req CreateTransferRequest) (*Transfer, error) {
	db, err := s.record(ctx, sc)
	if err != nil {
		return nil, err
	}
	t := stored{Transfer: Transfer{ID: ids.New("dbt", s.now()), Direction: req.Direction, CreatedAt: s.now().UTC()},
		ProjectID: sc.ProjectID, DatabaseID: db.ID}
	exp := s.expiry()
	t.ExpiresAt = &exp
	switch req.Direction {
	case "export":
		t.Status = TransferPreparing
	case "import":
		if req.PartCount < 1 || req.PartCount > s.limits.MaxParts {
			return nil, apierr.Invalid("partCount out of range.", apierr.Field("body.partCount", "between 1 and %d", s.limits.MaxParts))
		}
		if b, err := hex.DecodeString(req.SHA256); err != nil || len(b) != sha256.Size || req.SHA256 != hex.EncodeToString(b) {
			return nil, apierr.Invalid("sha256 must be 64 lowercase hex digits.", apierr.Field("body.sha256", "64 lowercase hex digits"))
		}
		t.Status, t.PartCount, t.SHA256 = TransferAwaitingParts, req.PartCount, req.SHA256
	default:
		return nil, apierr.Invalid("Unknown direction.", apierr.Field("body.direction", "export or import"))
	}
	it := store.NewItem(transferKey(sc.AccountID, t.ID))
	it.SetDoc(&t)
	it["status"] = t.Status
	if err := s.st.Put(ctx, it, store.NotExists()); err != nil {
		return nil, err
	}
	return s.public(&t), nil
}

func (s *Service) public(t *stored) *Transfer {
	out := t.Transfer
	return &out
}

func (s *Service) load(ctx context.Context, accountID, id string) (*stored, error) {
	it, err := s.st.Get(ctx, transferKey(accountID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoTransfer
	}
	if err != nil {
		return nil, err
	}
	var t stored
	if err := it.Doc(&t); err != nil {
		return nil, fmt.Errorf("databases: decode transfer: %w", err)
	}
	return &t, nil
}

func (s *Service) loadIn(ctx context.Context, sc Scope, id string) (*stored, error) {
	t, err := s.load(ctx, sc.AccountID, id)
	if err != nil {
		return nil, err
	}
	if !scopeMatches(t, sc) {
		return nil, errNoTransfer
	}
	return t, nil
}

// GetTransfer returns one transfer of the scope.
func (s *Service) GetTransfer(ctx context.Context, sc Scope, id string) (*Transfer, error) {
	t, err := s.loadIn(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	return s.public(t), nil
}

// advance moves t from status `from` to its new state in one conditional
// write; a concurrent move wins and this one reports conflict.
func (s *Service) advance(ctx context.Context, accountID string, t *stored, from string) error {
	_, err := s.st.Update(ctx, transferKey(accountID, t.ID),
		store.Update{Set: map[string]any{store.AttrDoc: store.DocOf(t), "status": t.Status}},
		store.AttrEquals("status", from))
	if errors.Is(err, store.ErrConditionFailed) {
		return apierr.New(apierr.Conflict, "The transfer is no longer %s.", from)
	}
	return err
}

// PutPart stores part n of an import. Sending the same bytes again is a
// no-op; different bytes for a stored part are a conflict.
func (s *Service) PutPart(ctx context.Context, sc Scope, id string, n int, data []byte) error {
	t, err := s.loadIn(ctx, sc, id)
	if err != nil {
		return err
	}
	if t.Direction != "import" || t.Status != TransferAwaitingParts {
		return apierr.New(apierr.Conflict, "The transfer does not accept parts (status %s).", t.Status)
	}
	if n < 1 || n > t.PartCount {
		return apierr.Invalid("Part number out of range.", apierr.Field("path.n", "between 1 and %d", t.PartCount))
	}
	if len(data) == 0 || len(data) > s.limits.MaxPartBytes {
		return apierr.New(apierr.PayloadTooLarge, "A part holds 1 to %d bytes.", s.limits.MaxPartBytes)
	}
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	_, err = s.bucket.Put(ctx, partKey(id, n), bytes.NewReader(data), blob.PutOptions{
		ContentType: "application/zip", ExpectedSHA256: hexSum, IfNotExists: true})
	if errors.Is(err, blob.ErrExists) {
		info, herr := s.bucket.Head(ctx, partKey(id, n))
		if herr != nil {
			return herr
		}
		if info.SHA256 != hexSum {
			return apierr.New(apierr.Conflict, "Part %d was already uploaded with different bytes.", n)
		}
		return nil
	}
	return err
}

// CompleteImport closes an import for validation (the caller enqueues
// RunImport). A missing part is 422 archive_invalid at once, and the import
// keeps waiting for it; the rest of the validation is the worker's. Its
// one write is a conditional Update.
func (s *Service) CompleteImport(ctx context.Context, sc Scope, id string) (*Transfer, error) {
	t, err := s.loadIn(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if t.Direction != "import" {
		return nil, apierr.New(apierr.Conflict, "Only an import is completed.")
	}
	if t.Status == TransferAwaitingParts {
		for n := 1; n <= t.PartCount; n++ {
			_, err := s.bucket.Head(ctx, partKey(id, n))
			if errors.Is(err, blob.ErrNotFound) {
				return nil, apierr.New(apierr.ArchiveInvalid, "Part %d of %d is missing; upload it, then complete again.", n, t.PartCount)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	t.Status = TransferValidating
	if err := s.advance(ctx, sc.AccountID, t, TransferAwaitingParts); err != nil {
		return nil, err
	}
	return s.public(t), nil
}

// CancelTransfer cancels a transfer that has not started its long work.
func (s *Service) CancelTransfer(ctx context.Context, sc Scope, id string) (*Transfer, error) {
	t, err := s.loadIn(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	from := t.Status
	if from != TransferPreparing && from != TransferAwaitingParts {
		return nil, apierr.New(apierr.Conflict, "A %s transfer cannot be cancelled.", from)
	}
	t.Status = TransferCancelled
	if err := s.advance(ctx, sc.AccountID, t, from); err != nil {
		return nil, err
	}
	for n := 1; n <= t.PartCount; n++ {
		_ = s.bucket.Delete(ctx, partKey(id, n))
	}
	return s.public(t), nil
}

// RunExport builds a preparing export's archive: a VACUUM INTO snapshot
// (writers go on), zipped with its manifest, hashed, signed and stored;
// then the transfer is ready. A queue worker calls it; a retry after a
// crash rebuilds and overwrites the archive, and a transfer past preparing
// is left alone.
func (s *Service) RunExport(ctx context.Context, accountID, transferID string) error {
	t, err := s.load(ctx, accountID, transferID)
	if err != nil || t.Status != TransferPreparing {
		return err
	}
	dir, err := os.MkdirTemp(s.scratch, "export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	snap := filepath.Join(dir, archive.DatabaseEntry)
	version, err := s.files.Snapshot(ctx, t.DatabaseID, snap)
	if err != nil {
		return err
	}
	zipPath := filepath.Join(dir, "archive.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		return err
	}
	h := sha256.New()
	counter := &countingWriter{}
	err = archive.Write(io.MultiWriter(f, h, counter), snap, archive.Manifest{
		TransferID: t.ID, AccountID: accountID, ProjectID: t.ProjectID, DatabaseVersion: version,
		SQLiteVersion: engine.LibVersion(), CreatedAt: s.now().UTC()})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if err := s.storeArchive(ctx, t.ID, zipPath, sum); err != nil {
		return err
	}
	now := s.now().UTC()
	exp := s.expiry()
	t.Status, t.SizeBytes, t.SHA256, t.CompletedAt, t.ExpiresAt = TransferReady, counter.n, sum, &now, &exp
	t.Signature = s.signer.Sign(t.ID, accountID, sum, counter.n)
	return s.advance(ctx, accountID, t, TransferPreparing)
}

func (s *Service) storeArchive(ctx context.Context, id, path, sum string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = s.bucket.Put(ctx, archiveKey(id), f, blob.PutOptions{ContentType: "application/zip", ExpectedSHA256: sum})
	return err
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// RunImport validates a validating import and, if it is sound, swaps it in
// as the database's next version; otherwise the transfer fails and the
// database is untouched. A queue worker calls it; a transfer past
// validating is left alone. A crash after the swap but before the record
// moves makes the retry swap the same data in again (one more version,
// same content).
func (s *Service) RunImport(ctx context.Context, accountID, transferID string) error {
	t, err := s.load(ctx, accountID, transferID)
	if err != nil || t.Status != TransferValidating {
		return err
	}
	dir, err := os.MkdirTemp(s.scratch, "import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	zipPath := filepath.Join(dir, "archive.zip")
	dbPath := filepath.Join(dir, archive.DatabaseEntry)
	size, verr := s.assemble(ctx, t, zipPath)
	if verr == nil {
		verr = s.validate(ctx, zipPath, dbPath)
	}
	now := s.now().UTC()
	t.CompletedAt = &now
	if verr != nil {
		if !errors.Is(verr, archive.ErrInvalid) {
			return verr // a transient failure: the worker retries
		}
		t.Status, t.Error = TransferFailed, verr.Error()
		return s.advance(ctx, accountID, t, TransferValidating)
	}
	if err := s.storeArchive(ctx, t.ID, zipPath, t.SHA256); err != nil {
		return err
	}
	if _, err := s.files.Replace(ctx, t.DatabaseID, dbPath); err != nil {
		return storageError(err)
	}
	t.Status, t.SizeBytes = TransferCompleted, size
	t.Signature = s.signer.Sign(t.ID, accountID, t.SHA256, size)
	if err := s.advance(ctx, accountID, t, TransferValidating); err != nil {
		return err
	}
	for n := 1; n <= t.PartCount; n++ {
		_ = s.bucket.Delete(ctx, partKey(t.ID, n))
	}
	return nil
}

// assemble concatenates the parts into path, checking count, total size
// and SHA-256.
func (s *Service) assemble(ctx context.Context, t *stored, path string) (int64, error) {
	out, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	h := sha256.New()
	var size int64
	for n := 1; n <= t.PartCount; n++ {
		rc, _, err := s.bucket.Get(ctx, partKey(t.ID, n))
		if errors.Is(err, blob.ErrNotFound) {
			return 0, fmt.Errorf("%w: part %d of %d is missing", archive.ErrInvalid, n, t.PartCount)
		}
		if err != nil {
			return 0, err
		}
		k, err := io.Copy(io.MultiWriter(out, h), rc)
		rc.Close()
		if err != nil {
			return 0, err
		}
		size += k
		if size > s.limits.MaxDatabaseBytes*2 {
			return 0, fmt.Errorf("%w: archive larger than allowed", archive.ErrInvalid)
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != t.SHA256 {
		return 0, fmt.Errorf("%w: SHA-256 of the parts is %s, not %s", archive.ErrInvalid, got, t.SHA256)
	}
	return size, out.Close()
}

// validate checks the zip's structure and that its database is a sound
// SQLite file (PRAGMA integrity_check).
func (s *Service) validate(ctx context.Context, zipPath, dbPath string) error {
	if _, err := archive.Extract(zipPath, dbPath, s.limits.MaxDatabaseBytes); err != nil {
		return err
	}
	c, err := engine.Open(dbPath, true)
	if err != nil {
		return fmt.Errorf("%w: %s cannot be opened: %v", archive.ErrInvalid, archive.DatabaseEntry, err)
	}
	res, err := c.QueryText(ctx, "PRAGMA integrity_check")
	if err == nil && res == "ok" {
		err = checkMigrationsTable(ctx, c)
	} else {
		err = fmt.Errorf("%w: integrity check failed: %v %s", archive.ErrInvalid, err, res)
	}
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return dropCalls(ctx, dbPath)
}

// migrationsShape is _migrations as the platform makes it, read from
// pragma_table_xinfo as "name type pk notnull hidden" per column.
const migrationsShape = "id TEXT 1 0 0, appliedat TEXT 0 1 0"

// checkMigrationsTable refuses an import whose _migrations the platform
// could not use (a view, other columns, a trigger on it): every later
// migrate would fail on it.
func checkMigrationsTable(ctx context.Context, c *engine.Conn) error {
	kind, err := c.QueryText(ctx, "SELECT type FROM sqlite_master WHERE name = ? COLLATE NOCASE", engine.MigrationsTable)
	if err != nil || kind == "" {
		return err
	}
	if kind != "table" {
		return fmt.Errorf("%w: %s is a %s; it must be the platform's table (id TEXT PRIMARY KEY, appliedAt TEXT NOT NULL)", archive.ErrInvalid, engine.MigrationsTable, kind)
	}
	shape, err := c.QueryText(ctx, `SELECT group_concat(lower(name) || ' ' || upper(type) || ' ' || pk || ' ' || "notnull" || ' ' || hidden, ', ') FROM pragma_table_xinfo(?)`, engine.MigrationsTable)
	if err != nil {
		return err
	}
	if shape != migrationsShape {
		return fmt.Errorf("%w: %s must have exactly the columns id TEXT PRIMARY KEY, appliedAt TEXT NOT NULL", archive.ErrInvalid, engine.MigrationsTable)
	}
	triggers, err := c.QueryInt(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE", engine.MigrationsTable)
	if err != nil {
		return err
	}
	if triggers > 0 {
		return fmt.Errorf("%w: %s must have no triggers", archive.ErrInvalid, engine.MigrationsTable)
	}
	return nil
}

// dropCalls removes the recorded calls an archive may carry (an export
// holds them): they answer retries of writes to the database being
// replaced, not to this one.
func dropCalls(ctx context.Context, dbPath string) error {
	c, err := engine.OpenExisting(dbPath)
	if err != nil {
		return fmt.Errorf("%w: %s cannot be opened: %v", archive.ErrInvalid, archive.DatabaseEntry, err)
	}
	kind, err := c.QueryText(ctx, "SELECT type FROM sqlite_master WHERE name = ? COLLATE NOCASE", engine.CallsTable)
	switch {
	case err != nil:
	case kind == "table":
		err = c.Exec(ctx, "DROP TABLE "+engine.CallsTable)
	case kind != "":
		err = fmt.Errorf("%w: %s is reserved for the platform", archive.ErrInvalid, engine.CallsTable)
	}
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}

// ArchiveInfo accompanies a downloaded archive (the response headers).
type ArchiveInfo struct {
	SHA256    string // X-Content-Sha256
	SizeBytes int64
	PublicKey string // X-Service-Archive-Public-Key
	Signature string // X-Service-Archive-Signature
}

// Archive opens a ready export's archive, or the archive a completed
// import brought in. The caller closes the reader.
func (s *Service) Archive(ctx context.Context, sc Scope, id string) (io.ReadCloser, *ArchiveInfo, error) {
	t, err := s.loadIn(ctx, sc, id)
	if err != nil {
		return nil, nil, err
	}
	if t.Status == TransferFailed && strings.HasPrefix(t.Error, archive.ErrInvalid.Error()) {
		return nil, nil, apierr.New(apierr.ArchiveInvalid, "The archive was refused and the database left unchanged: %s", t.Error)
	}
	if t.Status != TransferReady && t.Status != TransferCompleted {
		return nil, nil, apierr.New(apierr.Conflict, "The transfer has no archive (status %s).", t.Status)
	}
	rc, _, err := s.bucket.Get(ctx, archiveKey(t.ID))
	if err != nil {
		return nil, nil, err
	}
	return rc, &ArchiveInfo{SHA256: t.SHA256, SizeBytes: t.SizeBytes, PublicKey: s.signer.PublicKey(), Signature: t.Signature}, nil
}
