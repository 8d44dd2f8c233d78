package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/domain/paging"
)

// Storage layout (the account's partition of the single table; <prj> is ""
// at account level, so no prefix of one scope is a prefix of another):
//
//	acct#<acct> | file#<prj>#<fileId>              the record (doc)
//	acct#<acct> | filep#<prj>#<purpose>#<fileId>   a copy of it, for ?purpose=
//	acct#<acct> | filequota#<prj>                  files, bytes: the scope's usage
//
// The bytes are in the files bucket under files/<acct>/<prj or ->/<fileId>.
// Records never change, so the purpose copy cannot drift from the record.
const (
	attrFiles = "files"
	attrBytes = "bytes"
	// blobPrefix is where every file object lives; Sweep walks it.
	blobPrefix = "files/"
	// accountScope stands for the account level in object keys.
	accountScope = "-"
)

func recordKey(accountID, projectID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "file#" + projectID + "#" + id}
}

func purposeKey(accountID, projectID, purpose, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "filep#" + projectID + "#" + purpose + "#" + id}
}

func quotaKey(accountID, projectID string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "filequota#" + projectID}
}

func objectKey(accountID, projectID, id string) string {
	if projectID == "" {
		projectID = accountScope
	}
	return blobPrefix + accountID + "/" + projectID + "/" + id
}

// parseObjectKey is objectKey backwards; ok is false for a key that no
// upload wrote.
func parseObjectKey(key string) (accountID, projectID, id string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(key, blobPrefix), "/")
	if !strings.HasPrefix(key, blobPrefix) || len(parts) != 3 || parts[0] == "" || parts[1] == "" || !ids.Valid(idPrefix, parts[2]) {
		return "", "", "", false
	}
	if parts[1] == accountScope {
		parts[1] = ""
	}
	return parts[0], parts[1], parts[2], true
}

// Quota is what one scope (a project, or the account level) may hold.
type Quota struct {
	MaxFiles int64
	MaxBytes int64
}

// DefaultQuota applies when Config.Quota is zero.
var DefaultQuota = Quota{MaxFiles: 1000, MaxBytes: 1 << 30}

// Config is what the repository reaches the world through.
type Config struct {
	Store  store.Store
	Bucket blob.Bucket
	Now    func() time.Time
	Quota  Quota
}

// Repo persists files.
type Repo struct {
	st     store.Store
	bucket blob.Bucket
	now    func() time.Time
	quota  Quota
}

// NewRepo builds the repository; it holds no state of its own.
func NewRepo(c Config) *Repo {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Quota == (Quota{}) {
		c.Quota = DefaultQuota
	}
	return &Repo{st: c.Store, bucket: c.Bucket, now: c.Now, quota: c.Quota}
}

// Upload is what a file is created with, parsed by the helpers of this
// package (Filename by ParseFileName, SHA256 by ParseSHA256, ...).
type Upload struct {
	Filename    string
	ContentType string
	Purpose     string
	// SHA256 is the client's expected digest (lowercase hex) or "".
	SHA256 string
}

var (
	errNotFound = apierr.New(apierr.NotFound, "No such file.")
	errTooLarge = apierr.New(apierr.PayloadTooLarge, "A file is at most %d bytes.", MaxSize)
	errEmpty    = apierr.Invalid("The file is empty.", apierr.Field("body", "a file has at least 1 byte"))
)

func errQuota(q Quota) *apierr.Error {
	return apierr.New(apierr.QuotaExceeded, "The files of this project (or of the account level) are at their quota of %d files and %d bytes; delete some to make room.", q.MaxFiles, q.MaxBytes)
}

// Create stores body as a new file of the scope. The object is written
// first, hashed while it streams, under a key no other file has; only then
// does one transaction write the record and count the file against the
// scope's quota, with conditions that keep the quota exact however many
// uploads race. A body that is empty, too large or not the expected SHA-256
// stores nothing; a refused transaction deletes the object again.
//
// Create is safe through idempotency.Deferring: its one store write is that
// transaction, which then commits with the stored response. Should that
// commit fail, the caller calls Discard (or leaves the object to Sweep).
func (r *Repo) Create(ctx context.Context, accountID, projectID string, body io.Reader, u Upload) (*File, error) {
	if err := u.validate(); err != nil {
		return nil, err
	}
	held, err := r.usage(ctx, accountID, projectID)
	if err != nil {
		return nil, err
	}
	if held.files >= r.quota.MaxFiles || held.bytes >= r.quota.MaxBytes {
		return nil, errQuota(r.quota) // refuse before reading the body
	}
	now := r.now().UTC()
	f := &File{ID: ids.New(idPrefix, now), ProjectID: optional(projectID), Filename: u.Filename,
		ContentType: u.ContentType, Purpose: optional(u.Purpose), CreatedAt: now}
	key := objectKey(accountID, projectID, f.ID)
	sized := &sizeGuard{r: body}
	info, err := r.bucket.Put(ctx, key, sized, blob.PutOptions{ContentType: u.ContentType, ExpectedSHA256: u.SHA256, IfNotExists: true})
	switch {
	case errors.Is(err, errSizeGuard):
		return nil, sized.refusal
	case errors.Is(err, blob.ErrChecksumMismatch):
		return nil, apierr.New(apierr.ChecksumMismatch, "The body's SHA-256 is not the %s header; nothing was stored.", HeaderSHA256)
	case err != nil:
		return nil, fmt.Errorf("files: store object: %w", err)
	}
	f.SizeBytes, f.SHA256 = info.Size, info.SHA256
	if held.bytes+f.SizeBytes > r.quota.MaxBytes {
		r.discard(ctx, key)
		return nil, errQuota(r.quota)
	}
	err = r.st.Transact(ctx, r.createOps(accountID, f))
	var tx *store.TxError
	switch {
	case errors.As(err, &tx) && tx.Index == 0:
		r.discard(ctx, key)
		return nil, errQuota(r.quota)
	case err != nil:
		r.discard(ctx, key)
		return nil, fmt.Errorf("files: create %s: %w", f.ID, err)
	}
	return f, nil
}

// createOps are the transaction of Create: the quota first (its index is
// how a refusal is told apart), then the record and its purpose copy.
func (r *Repo) createOps(accountID string, f *File) []store.Op {
	projectID := deref(f.ProjectID)
	ops := []store.Op{
		store.UpdateOp(quotaKey(accountID, projectID), store.Update{Add: map[string]int64{attrFiles: 1, attrBytes: f.SizeBytes}},
			store.NumBelow(attrFiles, r.quota.MaxFiles), store.NumBelow(attrBytes, r.quota.MaxBytes-f.SizeBytes+1)),
		store.PutOp(encode(recordKey(accountID, projectID, f.ID), f), store.NotExists()),
	}
	if f.Purpose != nil {
		ops = append(ops, store.PutOp(encode(purposeKey(accountID, projectID, *f.Purpose, f.ID), f), store.NotExists()))
	}
	return ops
}

// Discard deletes the object of a file whose record was never committed:
// the caller of a deferred Create calls it when the commit failed. It never
// touches a committed file's bytes.
func (r *Repo) Discard(ctx context.Context, accountID string, f *File) error {
	if _, err := r.st.Get(ctx, recordKey(accountID, deref(f.ProjectID), f.ID)); !errors.Is(err, store.ErrNotFound) {
		if err == nil {
			return fmt.Errorf("files: discard %s: the file exists", f.ID)
		}
		return fmt.Errorf("files: discard %s: %w", f.ID, err)
	}
	if err := r.bucket.Delete(context.WithoutCancel(ctx), objectKey(accountID, deref(f.ProjectID), f.ID)); err != nil {
		return fmt.Errorf("files: discard %s: %w", f.ID, err)
	}
	return nil
}

// discard deletes an object nobody will reference; if that fails too, Sweep
// finds it later.
func (r *Repo) discard(ctx context.Context, key string) {
	_ = r.bucket.Delete(context.WithoutCancel(ctx), key)
}

func (u *Upload) validate() error {
	if err := checkFileName(u.Filename); err != nil {
		return err
	}
	if _, err := ParsePurpose(u.Purpose); err != nil {
		return err
	}
	if _, err := ParseSHA256(u.SHA256); err != nil || u.SHA256 != strings.ToLower(u.SHA256) {
		return apierr.Invalid("Invalid "+HeaderSHA256+" header.", apierr.Field("header."+HeaderSHA256, "64 lowercase hexadecimal digits"))
	}
	if u.ContentType == "" {
		u.ContentType = "application/octet-stream"
	}
	_, err := ParseContentType(u.ContentType)
	return err
}

// usage is what a scope holds.
type usage struct{ files, bytes int64 }

func (r *Repo) usage(ctx context.Context, accountID, projectID string) (usage, error) {
	it, err := r.st.Get(ctx, quotaKey(accountID, projectID))
	if errors.Is(err, store.ErrNotFound) {
		return usage{}, nil
	}
	if err != nil {
		return usage{}, fmt.Errorf("files: read quota: %w", err)
	}
	return usage{files: it.Int(attrFiles), bytes: it.Int(attrBytes)}, nil
}

// sizeGuard passes 1 to MaxSize bytes and fails the read otherwise, so the
// blob store abandons the write and keeps nothing.
type sizeGuard struct {
	r       io.Reader
	n       int64
	refusal *apierr.Error
}

var errSizeGuard = errors.New("files: body size out of bounds")

func (g *sizeGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.n += int64(n)
	switch {
	case g.n > MaxSize:
		g.refusal = errTooLarge
		return 0, errSizeGuard
	case err == io.EOF && g.n == 0:
		g.refusal = errEmpty
		return 0, errSizeGuard
	}
	return n, err
}

func encode(k store.Key, f *File) store.Item {
	it := store.NewItem(k)
	it.SetDoc(f)
	return it
}

func decode(it store.Item) (*File, error) {
	var f File
	if err := it.Doc(&f); err != nil {
		return nil, fmt.Errorf("files: decode %s: %w", it.Key(), err)
	}
	return &f, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Get reads a file of the scope; any other is not_found.
func (r *Repo) Get(ctx context.Context, accountID, projectID, id string) (*File, error) {
	if !ids.Valid(idPrefix, id) {
		return nil, errNotFound
	}
	it, err := r.st.Get(ctx, recordKey(accountID, projectID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("files: get: %w", err)
	}
	return decode(it)
}

// DefaultLimit is a list's page size when the client names none.
const DefaultLimit = 20

// List pages through the scope's files, newest first, optionally only those
// of one purpose. The cursor is the last file's id, so it reads the same in
// either listing.
func (r *Repo) List(ctx context.Context, accountID, projectID, purpose string, limit int, cursor string) ([]*File, string, error) {
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 1 || limit > 100 {
		return nil, "", apierr.Invalid("Invalid limit.", apierr.Field("query.limit", "between 1 and 100"))
	}
	if _, err := ParsePurpose(purpose); err != nil {
		return nil, "", apierr.Invalid("Invalid purpose.", apierr.Field("query.purpose", "must match [a-z0-9][a-z0-9._-]{0,63}"))
	}
	afterID, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	prefix := "file#" + projectID + "#"
	if purpose != "" {
		prefix = "filep#" + projectID + "#" + purpose + "#"
	}
	q := store.Query{PK: "acct#" + accountID, Prefix: prefix, Limit: limit, Reverse: true}
	if afterID != "" {
		q.After = prefix + afterID
	}
	page, err := r.st.Query(ctx, q)
	if err != nil {
		return nil, "", fmt.Errorf("files: list: %w", err)
	}
	out := make([]*File, 0, len(page.Items))
	for _, it := range page.Items {
		f, err := decode(it)
		if err != nil {
			return nil, "", err
		}
		out = append(out, f)
	}
	next := ""
	if page.More && len(out) > 0 {
		next = paging.Cursor(out[len(out)-1].ID)
	}
	return out, next, nil
}

// Open reads a file's bytes for download. At most MaxSize, they are read
// whole, which lets the HTTP layer answer Range requests over them, and
// checked against the recorded SHA-256: corrupted bytes are never served.
func (r *Repo) Open(ctx context.Context, accountID, projectID, id string) (*File, []byte, error) {
	f, err := r.Get(ctx, accountID, projectID, id)
	if err != nil {
		return nil, nil, err
	}
	rc, _, err := r.bucket.Get(ctx, objectKey(accountID, projectID, id))
	if err != nil {
		return nil, nil, fmt.Errorf("files: open %s: %w", id, err)
	}
	defer rc.Close()
	// The record says how much to read: one allocation, and a longer or
	// shorter object fails the check below like any other corruption.
	data := make([]byte, f.SizeBytes)
	n, err := io.ReadFull(rc, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil, fmt.Errorf("files: read %s: %w", id, err)
	}
	extra, _ := rc.Read(make([]byte, 1))
	if sum := sha256.Sum256(data[:n]); n != len(data) || extra != 0 || hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, nil, fmt.Errorf("files: %s: the stored bytes no longer match their SHA-256", id)
	}
	return f, data, nil
}

// Delete removes a file: one transaction deletes the record (on condition
// that it still exists, so two deletions never free its quota twice) and
// gives back its quota; the object goes once that has committed. The
// answer is the record with status "deleted".
//
// Delete is safe through idempotency.Deferring: it reads the record before
// its one transaction and removes the object only after the commit
// (idempotency.AfterCommit). If the process dies before that, Sweep finds
// the object without a record.
func (r *Repo) Delete(ctx context.Context, accountID, projectID, id string) (*File, error) {
	f, err := r.Get(ctx, accountID, projectID, id)
	if err != nil {
		return nil, err
	}
	ops := []store.Op{
		store.DeleteOp(recordKey(accountID, projectID, id), store.Exists()),
		store.UpdateOp(quotaKey(accountID, projectID), store.Update{Add: map[string]int64{attrFiles: -1, attrBytes: -f.SizeBytes}}),
	}
	if f.Purpose != nil {
		ops = append(ops, store.DeleteOp(purposeKey(accountID, projectID, *f.Purpose, id)))
	}
	err = r.st.Transact(ctx, ops)
	var tx *store.TxError
	switch {
	case errors.As(err, &tx):
		return nil, errNotFound // deleted concurrently
	case err != nil:
		return nil, fmt.Errorf("files: delete %s: %w", id, err)
	}
	key := objectKey(accountID, projectID, id)
	idempotency.AfterCommit(ctx, func() { r.discard(ctx, key) })
	f.Status = StatusDeleted
	return f, nil
}
