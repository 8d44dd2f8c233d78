package databases

import (
	"context"
	"encoding/json"
	"time"

	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/databases/engine"
)

// QueryRequest is the body of POST /databases/query.
type QueryRequest struct {
	SQL     string          `json:"sql"`
	Params  json.RawMessage `json:"params,omitempty" doc:"An array (positional) or an object (named)"`
	RowMode string          `json:"rowMode,omitempty" enum:"objects,arrays"`
	MaxRows int             `json:"maxRows,omitempty"`
}

// QueryMeta reports what the query cost: RowsRead is the rows the
// statement produced plus the rows its full table scans stepped through
// (SQLite's SQLITE_STMTSTATUS_FULLSCAN_STEP), the figure queries are
// charged by.
type QueryMeta struct {
	RowsRead        int64   `json:"rowsRead"`
	RowsReturned    int64   `json:"rowsReturned"`
	DurationMs      float64 `json:"durationMs"`
	DatabaseVersion int64   `json:"databaseVersion"`
}

// QueryResult is the response.
type QueryResult struct {
	Columns   []engine.Column `json:"columns"`
	Rows      []any           `json:"rows"`
	Truncated bool            `json:"truncated" doc:"More rows existed than maxRows or the response size cap allowed"`
	Meta      QueryMeta       `json:"meta"`
}

// Query runs one read-only statement. SQLite decides read-only-ness: the
// statement is compiled under an authorizer that admits reads only and must
// satisfy sqlite3_stmt_readonly, on a connection opened read-only with
// query_only set. Anything else is 403 query_not_readonly.
func (s *Service) Query(ctx context.Context, sc Scope, req QueryRequest) (*QueryResult, error) {
	if err := s.checkSQL(req.SQL, "body.sql"); err != nil {
		return nil, err
	}
	maxRows := req.MaxRows
	switch {
	case maxRows == 0:
		maxRows = s.limits.DefaultRows
	case maxRows < 0 || maxRows > s.limits.MaxRows:
		return nil, apierr.Invalid("maxRows out of range.", apierr.Field("body.maxRows", "between 1 and %d", s.limits.MaxRows))
	}
	objects := req.RowMode == "" || req.RowMode == "objects"
	if !objects && req.RowMode != "arrays" {
		return nil, apierr.Invalid("Unknown rowMode.", apierr.Field("body.rowMode", "objects or arrays"))
	}
	positional, named, err := decodeParams(req.Params, "body.params", s.limits.MaxParams)
	if err != nil {
		return nil, err
	}
	db, err := s.record(ctx, sc)
	if err != nil {
		return nil, s.stopped(ctx, err)
	}
	start := time.Now()
	res := &QueryResult{Rows: []any{}}
	err = s.files.Read(ctx, db.ID, func(c *engine.Conn, version int64) error {
		// The deadline bounds the statement, not the fetch of the file it
		// runs on (a cold function's first read of a large database),
		// which the request's own deadline bounds.
		qctx, cancel := context.WithTimeout(ctx, s.limits.QueryTimeout)
		defer cancel()
		st, tail, err := c.Prepare(req.SQL, engine.ReadOnly)
		if err != nil {
			return s.sqlError(qctx, err, "body.sql", true)
		}
		if st == nil {
			return apierr.Invalid("SQL holds no statement.", apierr.Field("body.sql", "only comments or whitespace"))
		}
		defer st.Close()
		if err := onlyOneStatement(c, tail, "body.sql"); err != nil {
			return err
		}
		if st.ParamCount() > s.limits.MaxParams {
			return apierr.Invalid("Too many parameters.", apierr.Field("body.params", "at most %d parameters", s.limits.MaxParams))
		}
		if err := bind(st, positional, named, "body.params"); err != nil {
			return s.sqlError(qctx, err, "body.params", true)
		}
		res.Columns = st.Columns()
		res.Meta.DatabaseVersion = version
		size, stepped := 0, int64(0)
		for {
			more, err := st.Step(qctx)
			if err != nil {
				return s.sqlError(qctx, err, "body.sql", true)
			}
			if !more {
				break
			}
			stepped++
			if len(res.Rows) == maxRows {
				res.Truncated = true
				break
			}
			row := s.row(st, res.Columns, objects)
			enc, _ := json.Marshal(row)
			if size+len(enc) > s.limits.MaxResponseBytes {
				res.Truncated = true
				break
			}
			size += len(enc) + 1
			res.Rows = append(res.Rows, row)
		}
		res.Meta.RowsReturned = int64(len(res.Rows))
		res.Meta.RowsRead = stepped + st.FullScanSteps()
		return nil
	})
	if err != nil {
		return nil, s.stopped(ctx, err)
	}
	res.Meta.DurationMs = elapsedMs(start)
	return res, nil
}

func (s *Service) row(st *engine.Stmt, cols []engine.Column, objects bool) any {
	if objects {
		m := make(map[string]any, len(cols))
		for i, c := range cols {
			m[c.Name] = jsonValue(st.Value(i))
		}
		return m
	}
	a := make([]any, len(cols))
	for i := range cols {
		a[i] = jsonValue(st.Value(i))
	}
	return a
}
