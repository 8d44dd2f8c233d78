package databases

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/databases/dbstore"
	"platformapi/shared/groups/databases/engine"
)

// DatabaseAction is one member of a batch: {"type":"execute","sql","params"} runs
// one statement; {"type":"migrate","id","sql"} runs its statements once per
// database, recorded in the _migrations table.
type DatabaseAction struct {
	Type   string          `json:"type" enum:"execute,migrate"`
	SQL    string          `json:"sql"`
	Params json.RawMessage `json:"params,omitempty"`
	ID     string          `json:"id,omitempty" maxLength:"200"`
}

// ActionsRequest is the body of POST /databases/actions.
type ActionsRequest struct {
	IfVersion *int64           `json:"ifVersion,omitempty" doc:"Apply only if the database is at this version"`
	Actions   []DatabaseAction `json:"actions"`
	// CallID names the request across its retries (api.CallID; never read
	// from the body). With it the batch records its response inside the
	// database, in its own transaction, so a retry after a crash that lost
	// the response answers that instead of writing again.
	CallID string `json:"-"`
}

// ActionResult reports one action.
type ActionResult struct {
	Index           int   `json:"index"`
	Changes         int64 `json:"changes"`
	LastInsertRowID int64 `json:"lastInsertRowId"`
	Skipped         bool  `json:"skipped" doc:"A migration already applied"`
}

// ActionsMeta is what the batch cost, for exact charging.
type ActionsMeta struct {
	RowsRead    int64   `json:"rowsRead"`
	RowsWritten int64   `json:"rowsWritten"`
	DurationMs  float64 `json:"durationMs"`
}

// ActionsResult is the response.
type ActionsResult struct {
	Results         []ActionResult `json:"results"`
	DatabaseVersion int64          `json:"databaseVersion"`
	Meta            ActionsMeta    `json:"meta"`
}

// Actions applies the batch in one transaction: all or nothing, one new
// version; a batch that changes nothing (every migration already applied)
// is no new version. Its effect is a SQLite commit, not a store write, so
// it cannot join idempotency.Deferring's unit; instead, with req.CallID,
// the response is recorded in the same SQLite transaction as the changes
// (engine.CallsTable) and a retry is answered from there.
func (s *Service) Actions(ctx context.Context, sc Scope, req ActionsRequest) (*ActionsResult, error) {
	if err := s.validateActions(req.Actions); err != nil {
		return nil, err
	}
	decoded := make([][]any, len(req.Actions))
	named := make([]map[string]any, len(req.Actions))
	for i, a := range req.Actions {
		var err error
		if decoded[i], named[i], err = decodeParams(a.Params, fmt.Sprintf("body.actions[%d].params", i), s.limits.MaxParams); err != nil {
			return nil, err
		}
	}
	db, err := s.record(ctx, sc)
	if err != nil {
		return nil, s.stopped(ctx, err)
	}
	start := time.Now()
	res := &ActionsResult{Results: make([]ActionResult, 0, len(req.Actions))}
	fingerprint := requestFingerprint(req)
	var recorded *ActionsResult
	batch := func(actx context.Context, c *engine.Conn, version int64) error {
		res.Results, res.Meta = res.Results[:0], ActionsMeta{}
		if req.CallID != "" {
			var err error
			if recorded, err = s.recordedCall(actx, c, req.CallID, fingerprint); err != nil || recorded != nil {
				return cmp.Or(err, dbstore.ErrUnchanged)
			}
		}
		if req.IfVersion != nil && *req.IfVersion != version {
			return apierr.New(apierr.DatabaseVersionMismatch, "The database is at version %d, not %d.", version, *req.IfVersion)
		}
		if hasMigration(req.Actions) {
			if err := c.Exec(actx, "CREATE TABLE IF NOT EXISTS "+engine.MigrationsTable+"(id TEXT PRIMARY KEY, appliedAt TEXT NOT NULL)"); err != nil {
				return err
			}
		}
		for i, a := range req.Actions {
			loc := fmt.Sprintf("body.actions[%d]", i)
			r := ActionResult{Index: i}
			before := c.TotalChanges()
			switch a.Type {
			case "execute":
				read, err := s.execute(actx, c, a.SQL, decoded[i], named[i], loc)
				if err != nil {
					return err
				}
				res.Meta.RowsRead += read
			case "migrate":
				done, err := c.QueryInt(actx, "SELECT count(*) FROM "+engine.MigrationsTable+" WHERE id = ?", a.ID)
				if err != nil {
					return err
				}
				if done > 0 {
					r.Skipped = true
					break
				}
				sql := a.SQL
				for strings.TrimSpace(sql) != "" {
					var err error
					if sql, err = s.executeFirst(actx, c, sql, loc, &res.Meta); err != nil {
						return err
					}
				}
				before2 := c.TotalChanges()
				if err := c.Exec(actx, "INSERT INTO "+engine.MigrationsTable+"(id, appliedAt) VALUES(?, ?)", a.ID, s.now().UTC().Format(time.RFC3339Nano)); err != nil {
					return err
				}
				before += c.TotalChanges() - before2 // the bookkeeping row is not the caller's write
			}
			if !r.Skipped {
				r.Changes = c.TotalChanges() - before
				r.LastInsertRowID = c.LastInsertRowID()
			}
			res.Meta.RowsWritten += r.Changes
			res.Results = append(res.Results, r)
		}
		if allSkipped(res.Results) {
			return dbstore.ErrUnchanged
		}
		res.DatabaseVersion = version + 1
		res.Meta.DurationMs = elapsedMs(start)
		if req.CallID != "" {
			return s.recordCall(actx, c, req.CallID, fingerprint, res)
		}
		return nil
	}
	version, err := s.files.Write(ctx, db.ID, func(c *engine.Conn, version int64) error {
		// The deadline bounds the batch's statements, not the lease, the
		// fetch of the file they run on or the publication of the version
		// they make, which the request's own deadline bounds: a slow store
		// is not a slow statement.
		actx, cancel := context.WithTimeout(ctx, s.limits.QueryTimeout)
		defer cancel()
		err := batch(actx, c, version)
		if err != nil && !errors.Is(err, dbstore.ErrUnchanged) && actx.Err() != nil {
			return s.stopped(actx, err)
		}
		return err
	})
	if err != nil {
		return nil, s.stopped(ctx, err)
	}
	if recorded != nil {
		return recorded, nil
	}
	if allSkipped(res.Results) {
		res.DatabaseVersion = version
		res.Meta.DurationMs = elapsedMs(start)
	}
	return res, nil
}

// allSkipped reports a batch that changed nothing: migrations only, every
// one already applied.
func allSkipped(results []ActionResult) bool {
	for _, r := range results {
		if !r.Skipped {
			return false
		}
	}
	return true
}

// callRetention is how long a batch's recorded response answers retries:
// as long as an idempotent response is replayed.
const callRetention = idempotency.Retention

// requestFingerprint identifies the batch a call id was used with, so a
// retry with the same Idempotency-Key but another batch is refused rather
// than answered with the first batch's result.
func requestFingerprint(req ActionsRequest) string {
	b, _ := json.Marshal(struct {
		IfVersion *int64           `json:"ifVersion"`
		Actions   []DatabaseAction `json:"actions"`
	}{req.IfVersion, req.Actions})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// recordedCall is the response recorded for callID, or nil when the call
// has not run on this database (within the retention).
func (s *Service) recordedCall(ctx context.Context, c *engine.Conn, callID, fingerprint string) (*ActionsResult, error) {
	if err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+engine.CallsTable+"(id TEXT PRIMARY KEY, at INTEGER NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL); "+
		"CREATE INDEX IF NOT EXISTS "+engine.CallsTable+"_at ON "+engine.CallsTable+"(at)"); err != nil {
		return nil, err
	}
	doc, err := c.QueryText(ctx, "SELECT json_array(request, response) FROM "+engine.CallsTable+" WHERE id = ?", callID)
	if err != nil || doc == "" {
		return nil, err
	}
	var pair [2]string
	if err := json.Unmarshal([]byte(doc), &pair); err != nil {
		return nil, fmt.Errorf("databases: recorded call: %w", err)
	}
	if pair[0] != fingerprint {
		return nil, apierr.New(apierr.IdempotencyKeyReused, "This Idempotency-Key was used with a different batch.")
	}
	var res ActionsResult
	if err := json.Unmarshal([]byte(pair[1]), &res); err != nil {
		return nil, fmt.Errorf("databases: recorded call: %w", err)
	}
	return &res, nil
}

// recordCall keeps the batch's response with its changes and forgets the
// calls past the retention.
func (s *Service) recordCall(ctx context.Context, c *engine.Conn, callID, fingerprint string, res *ActionsResult) error {
	doc, err := json.Marshal(res)
	if err != nil {
		return err
	}
	now := s.now()
	if err := c.Exec(ctx, "DELETE FROM "+engine.CallsTable+" WHERE at < ?", now.Add(-callRetention).Unix()); err != nil {
		return err
	}
	return c.Exec(ctx, "INSERT INTO "+engine.CallsTable+"(id, at, request, response) VALUES(?, ?, ?, ?)", callID, now.Unix(), fingerprint, string(doc))
}

func hasMigration(actions []DatabaseAction) bool {
	for _, a := range actions {
		if a.Type == "migrate" {
			return true
		}
	}
	return false
}

func (s *Service) validateActions(actions []DatabaseAction) error {
	if len(actions) == 0 || len(actions) > s.limits.MaxActions {
		return apierr.Invalid("Wrong number of actions.", apierr.Field("body.actions", "between 1 and %d actions", s.limits.MaxActions))
	}
	seen := map[string]bool{}
	for i, a := range actions {
		loc := fmt.Sprintf("body.actions[%d]", i)
		if err := s.checkSQL(a.SQL, loc+".sql"); err != nil {
			return err
		}
		switch a.Type {
		case "execute":
			if a.ID != "" {
				return apierr.Invalid("An execute action has no id.", apierr.Field(loc+".id", "only migrate actions have an id"))
			}
		case "migrate":
			if a.ID == "" || len(a.ID) > 200 {
				return apierr.Invalid("A migration needs an id.", apierr.Field(loc+".id", "1 to 200 characters"))
			}
			if seen[a.ID] {
				return apierr.Invalid("Duplicate migration id.", apierr.Field(loc+".id", "%q appears twice", a.ID))
			}
			seen[a.ID] = true
			if len(a.Params) > 0 && string(a.Params) != "null" {
				return apierr.Invalid("A migration takes no params.", apierr.Field(loc+".params", "not allowed on migrate"))
			}
		default:
			return apierr.Invalid("Unknown action type.", apierr.Field(loc+".type", "execute or migrate"))
		}
	}
	return nil
}

// leadingKeyword is the first word of sql after whitespace and comments.
// It is used for VACUUM only: SQLite's authorizer has no VACUUM action.
func leadingKeyword(sql string) string {
	for {
		sql = strings.TrimLeft(sql, " \t\r\n\f")
		switch {
		case strings.HasPrefix(sql, "--"):
			i := strings.IndexByte(sql, '\n')
			if i < 0 {
				return ""
			}
			sql = sql[i+1:]
		case strings.HasPrefix(sql, "/*"):
			i := strings.Index(sql[2:], "*/")
			if i < 0 {
				return ""
			}
			sql = sql[i+4:]
		default:
			end := strings.IndexFunc(sql, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
			})
			if end < 0 {
				end = len(sql)
			}
			return strings.ToUpper(sql[:end])
		}
	}
}

// compile prepares the first statement of sql under the Action policy.
func (s *Service) compile(ctx context.Context, c *engine.Conn, sql, loc string) (*engine.Stmt, string, error) {
	if leadingKeyword(sql) == "VACUUM" {
		ae := apierr.New(apierr.SQLError, "VACUUM is not allowed in actions.")
		ae.Errors = []apierr.FieldError{apierr.Field(loc, "VACUUM is not allowed")}
		return nil, "", ae
	}
	st, tail, err := c.Prepare(sql, engine.Action)
	if err != nil {
		return nil, "", s.sqlError(ctx, err, loc, false)
	}
	return st, tail, nil
}

// execute runs the single statement of an execute action; it returns the
// rows it read.
func (s *Service) execute(ctx context.Context, c *engine.Conn, sql string, positional []any, named map[string]any, loc string) (int64, error) {
	st, tail, err := s.compile(ctx, c, sql, loc)
	if err != nil {
		return 0, err
	}
	if st == nil {
		return 0, apierr.Invalid("SQL holds no statement.", apierr.Field(loc+".sql", "only comments or whitespace"))
	}
	defer st.Close()
	if err := onlyOneStatement(c, tail, loc+".sql"); err != nil {
		return 0, err
	}
	if err := bind(st, positional, named, loc+".params"); err != nil {
		return 0, s.sqlError(ctx, err, loc, false)
	}
	return s.drain(ctx, st, loc)
}

func (s *Service) drain(ctx context.Context, st *engine.Stmt, loc string) (int64, error) {
	var rows int64
	for {
		more, err := st.Step(ctx)
		if err != nil {
			return 0, s.sqlError(ctx, err, loc, false)
		}
		if !more {
			return rows + st.FullScanSteps(), nil
		}
		rows++
	}
}

// executeFirst runs the first statement of a migration's SQL and returns
// the rest.
func (s *Service) executeFirst(ctx context.Context, c *engine.Conn, sql, loc string, meta *ActionsMeta) (string, error) {
	st, tail, err := s.compile(ctx, c, sql, loc)
	if err != nil || st == nil {
		return "", err
	}
	defer st.Close()
	if st.ParamCount() > 0 {
		return "", apierr.Invalid("A migration takes no parameters.", apierr.Field(loc+".sql", "has parameters"))
	}
	read, err := s.drain(ctx, st, loc)
	meta.RowsRead += read
	return tail, err
}
