// Package databases is the managed-databases domain: one SQLite database per
// scope (an account, or one of its projects), read-only queries, atomic
// batches of actions with once-only migrations, and signed portable
// archives. Files live behind the dbstore port; records live in the item
// store. Statement safety is decided by SQLite itself (see engine).
package databases

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/groups/databases/archive"
	"platformapi/shared/groups/databases/dbstore"
	"platformapi/shared/groups/databases/engine"
)

// Limits bound every request; exceeding one is a clear 4xx.
type Limits struct {
	MaxSQLBytes      int           // per statement text (default 100 KB)
	MaxParams        int           // per statement (default 100)
	DefaultRows      int           // rows a query returns unless maxRows says (default 1,000)
	MaxRows          int           // the most maxRows may ask (default 10,000)
	MaxResponseBytes int           // encoded rows; beyond it the result is truncated (default 4 MiB)
	QueryTimeout     time.Duration // per query or action batch (default 5 s)
	MaxActions       int           // per batch (default 100)
	MaxDatabaseBytes int64         // size cap for imports (default 256 MiB; writes are capped by dbstore)
	MaxPartBytes     int           // per import part (default 4 MiB)
	MaxParts         int           // per import (default 1,000)
	TransferTTL      time.Duration // how long a transfer's archive is kept (default 24 h)
}

// DefaultLimits are the documented bounds.
var DefaultLimits = Limits{
	MaxSQLBytes: 100_000, MaxParams: 100, DefaultRows: 1000, MaxRows: 10_000,
	MaxResponseBytes: 4 << 20, QueryTimeout: 5 * time.Second, MaxActions: 100,
	MaxDatabaseBytes: dbstore.DefaultMaxBytes, MaxPartBytes: 4 << 20, MaxParts: 1000,
	TransferTTL: 24 * time.Hour,
}

// Scope is where a database lives: the account, or one of its projects.
type Scope struct {
	AccountID string
	ProjectID string // "" for the account's own database
}

// Database is the resource.
type Database struct {
	ID        string    `json:"id"`
	Status    string    `json:"status" enum:"active"`
	Engine    string    `json:"engine" enum:"sqlite"`
	SizeBytes int64     `json:"sizeBytes"`
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
}

// Service is the domain's entry point.
type Service struct {
	st      store.Store
	files   dbstore.Storage
	bucket  blob.Bucket // transfer parts and archives
	signer  *archive.Signer
	scratch string // temporary files (snapshots, assembled imports)
	now     func() time.Time
	limits  Limits
}

// New builds the service.
func New(st store.Store, files dbstore.Storage, bucket blob.Bucket, signer *archive.Signer, scratchDir string, now func() time.Time, limits Limits) *Service {
	return &Service{st: st, files: files, bucket: bucket, signer: signer, scratch: scratchDir, now: now, limits: limits}
}

func recordKey(s Scope) store.Key {
	p := s.ProjectID
	if p == "" {
		p = "-"
	}
	return store.Key{PK: "acct#" + s.AccountID, SK: "db#" + p}
}

var errNoDatabase = apierr.New(apierr.NotFound, "This scope has no database.")

// Provision creates the scope's database. One Put, no read-back: safe under
// idempotency.Deferring. Storage is created lazily (an unwritten database is
// empty at version 0), and files are keyed by the database id, so a
// re-provisioned scope never sees a predecessor's data.
func (s *Service) Provision(ctx context.Context, sc Scope) (*Database, error) {
	db := &Database{ID: ids.New("db", s.now()), Status: "active", Engine: "sqlite", CreatedAt: s.now().UTC()}
	it := store.NewItem(recordKey(sc))
	it.SetDoc(db)
	if err := s.st.Put(ctx, it, store.NotExists()); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, apierr.New(apierr.DatabaseExists, "This scope already has a database.")
		}
		return nil, err
	}
	return db, nil
}

func (s *Service) record(ctx context.Context, sc Scope) (*Database, error) {
	it, err := s.st.Get(ctx, recordKey(sc))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoDatabase
	}
	if err != nil {
		return nil, err
	}
	var db Database
	if err := it.Doc(&db); err != nil {
		return nil, fmt.Errorf("databases: decode: %w", err)
	}
	return &db, nil
}

// Get returns the scope's database with its current size and version.
func (s *Service) Get(ctx context.Context, sc Scope) (*Database, error) {
	db, err := s.record(ctx, sc)
	if err != nil {
		return nil, err
	}
	st, err := s.files.Stat(ctx, db.ID)
	if err != nil {
		return nil, err
	}
	db.SizeBytes, db.Version = st.SizeBytes, st.Version
	return db, nil
}

// Deprovision deletes the record (one conditional Delete, safe to defer),
// then the files. The record goes first: if the process dies before the
// files are gone they are unreachable (keyed by the old id), never revived.
func (s *Service) Deprovision(ctx context.Context, sc Scope) error {
	db, err := s.record(ctx, sc)
	if err != nil {
		return err
	}
	if err := s.st.Delete(ctx, recordKey(sc), store.AttrEquals(store.AttrDoc, store.DocOf(db))); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return errNoDatabase
		}
		return err
	}
	return s.files.Drop(ctx, db.ID)
}

// decodeParams turns the JSON params (an array for positional, an object
// for named, absent for none) into SQLite values. Numbers keep their exact
// text: an integral one binds as INTEGER, any other as REAL; {"base64":…}
// binds a BLOB; true/false bind 1/0.
func decodeParams(raw json.RawMessage, loc string, max int) (positional []any, named map[string]any, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, apierr.Invalid("Params are not valid JSON.", apierr.Field(loc, "%v", err))
	}
	switch x := v.(type) {
	case []any:
		if len(x) > max {
			return nil, nil, apierr.Invalid("Too many parameters.", apierr.Field(loc, "at most %d parameters", max))
		}
		out := make([]any, len(x))
		for i, e := range x {
			if out[i], err = sqlValue(e, fmt.Sprintf("%s[%d]", loc, i)); err != nil {
				return nil, nil, err
			}
		}
		return out, nil, nil
	case map[string]any:
		if len(x) > max {
			return nil, nil, apierr.Invalid("Too many parameters.", apierr.Field(loc, "at most %d parameters", max))
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if out[k], err = sqlValue(e, loc+"."+k); err != nil {
				return nil, nil, err
			}
		}
		return nil, out, nil
	}
	return nil, nil, apierr.Invalid("Params must be an array or an object.", apierr.Field(loc, "must be an array or an object"))
}

func sqlValue(v any, loc string) (any, error) {
	switch x := v.(type) {
	case nil, string:
		return x, nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case json.Number:
		if n, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return n, nil
		}
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			return nil, apierr.Invalid("Invalid number.", apierr.Field(loc, "not representable: %s", x))
		}
		return f, nil
	case map[string]any:
		if b64, ok := x["base64"].(string); ok && len(x) == 1 {
			b, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, apierr.Invalid("Invalid blob.", apierr.Field(loc, "base64: %v", err))
			}
			return b, nil
		}
	}
	return nil, apierr.Invalid("Unsupported parameter value.", apierr.Field(loc, "must be null, a boolean, a number, a string or {\"base64\":…}"))
}

// bind binds the decoded params to the statement's parameters. Positional
// values fill parameters 1..n in order; named values are matched by name
// with or without the prefix (":id", "@id", "$id", "id").
func bind(st *engine.Stmt, positional []any, named map[string]any, loc string) error {
	n := st.ParamCount()
	if named != nil {
		used := 0
		for i := 1; i <= n; i++ {
			name := st.ParamName(i)
			if name == "" {
				return apierr.Invalid("Positional parameter in a statement given named params.", apierr.Field(loc, "parameter %d has no name", i))
			}
			v, ok := named[name]
			if !ok {
				v, ok = named[name[1:]]
			}
			if !ok {
				return apierr.Invalid("Missing parameter.", apierr.Field(loc, "no value for %s", name))
			}
			used++
			if err := st.Bind(i, v); err != nil {
				return err
			}
		}
		if used != len(named) {
			return apierr.Invalid("Unused parameters.", apierr.Field(loc, "%d named values match no parameter", len(named)-used))
		}
		return nil
	}
	if len(positional) != n {
		return apierr.Invalid("Wrong number of parameters.", apierr.Field(loc, "the statement takes %d, got %d", n, len(positional)))
	}
	for i, v := range positional {
		if err := st.Bind(i+1, v); err != nil {
			return err
		}
	}
	return nil
}

// maxSafeInt is 2^53: integers beyond it lose precision as JSON numbers in
// most clients, so they travel as strings.
const maxSafeInt = 1 << 53

// jsonValue is how a SQLite value appears in a response.
func jsonValue(v any) any {
	switch x := v.(type) {
	case int64:
		if x > maxSafeInt || x < -maxSafeInt {
			return strconv.FormatInt(x, 10)
		}
		return x
	case float64:
		if engine.IsInf(x) {
			return strconv.FormatFloat(x, 'g', -1, 64) // "+Inf", "-Inf", "NaN": not JSON numbers
		}
		return x
	case []byte:
		return map[string]string{"base64": base64.StdEncoding.EncodeToString(x)}
	}
	return v
}

// sqlError maps an engine failure at loc to the client's error.
func (s *Service) sqlError(ctx context.Context, err error, loc string, readOnly bool) error {
	var refusal *engine.Refusal
	var e *engine.Error
	switch {
	case errors.As(err, &refusal):
		if readOnly {
			return apierr.New(apierr.QueryNotReadonly, "Only read-only statements may run as a query: %s.", refusal.Reason)
		}
		ae := apierr.New(apierr.SQLError, "Statement refused: %s.", refusal.Reason)
		ae.Errors = []apierr.FieldError{apierr.Field(loc, "%s", refusal.Reason)}
		return ae
	case engine.IsCode(err, engine.CodeInterrupt) && ctx.Err() != nil:
		return s.timeout()
	case engine.IsCode(err, engine.CodeTooBig):
		ae := apierr.New(apierr.SQLError, "The statement makes a string or blob larger than %d bytes, the most one value may hold.", engine.MaxValueBytes)
		ae.Errors = []apierr.FieldError{apierr.Field(loc, "a value beyond %d bytes", engine.MaxValueBytes)}
		return ae
	case engine.IsCode(err, engine.CodeNoMem):
		ae := apierr.New(apierr.SQLError, "The statement needs more memory than the database engine allows (%d MiB across running statements).", engine.HeapLimit>>20)
		ae.Errors = []apierr.FieldError{apierr.Field(loc, "needs too much memory")}
		return ae
	case engine.IsCode(err, engine.CodeReadOnly) && readOnly:
		return apierr.New(apierr.QueryNotReadonly, "Only read-only statements may run as a query.")
	case engine.IsCode(err, engine.CodeFull):
		return err // the storage turns it into ErrFull after rolling back
	case errors.As(err, &e):
		ae := apierr.New(apierr.SQLError, "%s", e.Msg)
		ae.Errors = []apierr.FieldError{apierr.Field(loc, "%s", e.Msg)}
		return ae
	}
	return err
}

// stopped maps a failure of a query or batch whose deadline passed or
// whose request ended (while reading the record, opening the file, or
// stepping) to 408 query_timeout, never a 500; nothing the batch would
// have written is kept. Other failures go through storageError.
func (s *Service) stopped(ctx context.Context, err error) error {
	var ae *apierr.Error
	if errors.As(err, &ae) || ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		return storageError(err)
	}
	return s.timeout()
}

func (s *Service) timeout() error {
	return apierr.New(apierr.QueryTimeout, "The statement ran longer than %s, or its request ended, and was stopped.", s.limits.QueryTimeout)
}

// storageError maps the storage port's failures.
func storageError(err error) error {
	var busy *dbstore.BusyError
	switch {
	case errors.As(err, &busy):
		ae := apierr.New(apierr.DatabaseBusy, "Another write to this database is in progress; retry shortly.")
		ae.Headers = map[string]string{"Retry-After": strconv.Itoa(max(1, int(busy.RetryAfter.Seconds())))}
		return ae
	case errors.Is(err, dbstore.ErrFull):
		return apierr.New(apierr.DatabaseFull, "The write would grow the database beyond its size cap.")
	}
	return err
}

// checkSQL bounds a statement's text.
func (s *Service) checkSQL(sql, loc string) error {
	if strings.TrimSpace(sql) == "" {
		return apierr.Invalid("SQL is required.", apierr.Field(loc, "must not be empty"))
	}
	if len(sql) > s.limits.MaxSQLBytes {
		return apierr.Invalid("SQL too long.", apierr.Field(loc, "at most %d bytes", s.limits.MaxSQLBytes))
	}
	return nil
}

// onlyOneStatement refuses text after the first statement (comments and
// whitespace aside), found by SQLite's own parser.
func onlyOneStatement(c *engine.Conn, tail, loc string) error {
	if strings.TrimSpace(tail) == "" {
		return nil
	}
	st, _, err := c.Prepare(tail, engine.Trusted)
	if st == nil && err == nil {
		return nil
	}
	if st != nil {
		st.Close()
	}
	return apierr.Invalid("One statement per query or execute action.", apierr.Field(loc, "holds more than one statement"))
}

func elapsedMs(start time.Time) float64 {
	return float64(time.Since(start).Microseconds()) / 1000
}
