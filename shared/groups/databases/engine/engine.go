// Package engine is a thin binding of SQLite's C API (the pure-Go
// transpilation in modernc.org/sqlite/lib) with the three things
// database/sql cannot give a multi-tenant SQL service: an authorizer that
// SQLite consults while it compiles each statement, sqlite3_stmt_readonly on
// the prepared statement, and the statement's own counters. Whether a
// statement may run is therefore decided by SQLite's compiler, never by
// matching the SQL text.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// Policy says which statements the authorizer lets SQLite compile.
type Policy int32

const (
	// Trusted statements are the platform's own (BEGIN, PRAGMA user_version=…).
	Trusted Policy = iota
	// ReadOnly admits reads only: no write of any kind, no ATTACH/DETACH, no
	// transaction control, no PRAGMA outside a short list of read-only ones,
	// no extension loading. sqlite3_stmt_readonly must also hold.
	ReadOnly
	// Action admits reads and writes of user tables inside the platform's
	// transaction, but no transaction control, ATTACH/DETACH, TEMP objects
	// (they would outlive the batch on a kept connection), state-changing
	// PRAGMA, extension loading or writes to the platform's _migrations table.
	Action
)

// Refusal is a statement the authorizer (or the read-only check) refused.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return "statement refused: " + r.Reason }

// Error is an error SQLite reported, with its primary result code.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Primary result codes callers branch on.
const (
	CodeBusy      = sqlite3.SQLITE_BUSY
	CodeInterrupt = sqlite3.SQLITE_INTERRUPT
	CodeFull      = sqlite3.SQLITE_FULL
	CodeReadOnly  = sqlite3.SQLITE_READONLY
	CodeTooBig    = sqlite3.SQLITE_TOOBIG
	CodeCorrupt   = sqlite3.SQLITE_CORRUPT
	CodeNotADB    = sqlite3.SQLITE_NOTADB
	CodeCantOpen  = sqlite3.SQLITE_CANTOPEN
	CodeNoMem     = sqlite3.SQLITE_NOMEM
)

// MaxValueBytes is SQLITE_LIMIT_LENGTH on every connection: no string or
// blob a statement makes (zeroblob, randomblob, concatenation, a row read
// back) may exceed it, so no single value can hold more memory than a
// query's response may carry (4 MiB). Beyond it SQLite answers
// SQLITE_TOOBIG before allocating.
const MaxValueBytes = 4 << 20

// HeapLimit is SQLite's hard heap limit for the whole process: a statement
// that would take SQLite's memory beyond it fails with SQLITE_NOMEM instead
// of exhausting the server (many columns of MaxValueBytes each, a huge
// sort). SQLite has no per-connection heap limit; this is the bound on
// what all running statements together hold. SoftHeapLimit is where SQLite
// starts giving back page cache.
const (
	HeapLimit     = 512 << 20
	SoftHeapLimit = 128 << 20
)

// initLibrary turns on SQLite's memory accounting (the heap limits work
// only with it; modernc.org/sqlite builds with SQLITE_DEFAULT_MEMSTATUS=0)
// and sets the limits, once, before the first connection initialises the
// library.
var initLibrary = sync.OnceFunc(func() {
	tls := libc.NewTLS()
	defer tls.Close()
	bp := libc.Xmalloc(tls, 16)
	if bp == 0 {
		panic("sqlite: out of memory")
	}
	defer libc.Xfree(tls, bp)
	sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MEMSTATUS, libc.VaList(bp, int32(1)))
	sqlite3.Xsqlite3_hard_heap_limit64(tls, HeapLimit)
	sqlite3.Xsqlite3_soft_heap_limit64(tls, SoftHeapLimit)
})

// MemoryUsed is the memory SQLite holds now, across every connection of
// the process.
func MemoryUsed() int64 {
	initLibrary()
	tls := libc.NewTLS()
	defer tls.Close()
	return sqlite3.Xsqlite3_memory_used(tls)
}

// IsCode reports whether err is a SQLite error with that primary code.
func IsCode(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.Code&0xff == code
}

// readPragmas are the PRAGMAs a read-only statement may use: they report
// schema or file facts and change nothing. database_list is absent on
// purpose (it reveals the file's path).
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true,
	"index_info": true, "index_xinfo": true, "foreign_key_list": true,
	"foreign_key_check": true, "integrity_check": true, "quick_check": true,
	"user_version": true, "schema_version": true, "application_id": true,
	"page_count": true, "page_size": true, "freelist_count": true, "encoding": true,
	"collation_list": true, "function_list": true, "pragma_list": true,
	"module_list": true, "compile_options": true, "data_version": true,
}

// pragmaWithArgAllowed are read PRAGMAs whose argument names an object
// rather than setting a value.
var pragmaWithArgAllowed = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true,
	"index_info": true, "index_xinfo": true, "foreign_key_list": true,
	"foreign_key_check": true, "integrity_check": true, "quick_check": true,
}

// MigrationsTable is the platform's record of applied migrations.
const MigrationsTable = "_migrations"

// CallsTable records, in the same transaction as an action batch's
// changes, the batch's call id and response: a retry of a batch whose
// response was lost (a crash after the SQLite commit) finds it and answers
// it instead of running the batch again. Statements may neither read nor
// change it.
const CallsTable = "_platform_calls"

// Conn is one SQLite connection. It is not safe for concurrent use except
// for the interrupt a cancelled context triggers.
type Conn struct {
	tls    *libc.TLS
	db     uintptr
	id     uintptr
	policy atomic.Int32
	denied string // set by the authorizer during a refused prepare
	closed atomic.Bool
	imu    sync.Mutex // orders interrupt against Close
}

var (
	connsMu sync.RWMutex
	conns   = map[uintptr]*Conn{}
	nextID  uintptr
)

// Open opens the database file at path. readOnly opens it with
// SQLITE_OPEN_READONLY and sets PRAGMA query_only, so that even a statement
// the authorizer missed cannot change the file.
func Open(path string, readOnly bool) (*Conn, error) {
	return open(path, readOnly, true)
}

// OpenExisting opens an existing file read-write; an absent file is an
// error (SQLITE_CANTOPEN), never a new empty database.
func OpenExisting(path string) (*Conn, error) { return open(path, false, false) }

func open(path string, readOnly, create bool) (*Conn, error) {
	initLibrary()
	c := &Conn{tls: libc.NewTLS()}
	flags := int32(sqlite3.SQLITE_OPEN_READWRITE | sqlite3.SQLITE_OPEN_NOMUTEX | sqlite3.SQLITE_OPEN_PRIVATECACHE)
	if create {
		flags |= sqlite3.SQLITE_OPEN_CREATE
	}
	if readOnly {
		flags = sqlite3.SQLITE_OPEN_READONLY | sqlite3.SQLITE_OPEN_NOMUTEX | sqlite3.SQLITE_OPEN_PRIVATECACHE
	}
	cpath, err := libc.CString(path)
	if err != nil {
		c.tls.Close()
		return nil, err
	}
	defer libc.Xfree(c.tls, cpath)
	out, unpin := outPointers()
	defer unpin()
	rc := sqlite3.Xsqlite3_open_v2(c.tls, cpath, uintptr(unsafe.Pointer(&out[0])), flags, 0)
	c.db = out[0]
	if rc != sqlite3.SQLITE_OK {
		err := c.errorOf(rc)
		if c.db != 0 {
			sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		}
		c.tls.Close()
		return nil, err
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	// Defensive mode: no writable_schema, no writes to sqlite_dbpage or
	// shadow tables, no journal_mode=OFF; a hostile statement cannot
	// corrupt the file.
	c.dbConfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, 1)
	c.dbConfig(sqlite3.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
	c.dbConfig(sqlite3.SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0)
	sqlite3.Xsqlite3_limit(c.tls, c.db, sqlite3.SQLITE_LIMIT_LENGTH, MaxValueBytes)

	connsMu.Lock()
	nextID++
	c.id = nextID
	conns[c.id] = c
	connsMu.Unlock()
	sqlite3.Xsqlite3_set_authorizer(c.tls, c.db, cFuncPointer(authorize), c.id)
	if readOnly {
		if err := c.Exec(context.Background(), "PRAGMA query_only=1"); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// Close releases the connection.
func (c *Conn) Close() error {
	c.imu.Lock()
	defer c.imu.Unlock()
	if c.closed.Swap(true) {
		return nil
	}
	connsMu.Lock()
	delete(conns, c.id)
	connsMu.Unlock()
	rc := sqlite3.Xsqlite3_close_v2(c.tls, c.db)
	c.tls.Close()
	if rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("sqlite close: rc %d", rc)
	}
	return nil
}

// SetBusyTimeout makes a locked file wait up to ms before SQLITE_BUSY.
func (c *Conn) SetBusyTimeout(ms int) { sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, int32(ms)) }

// SetMaxPageCount caps the file's size in pages; a write that would grow it
// further fails with SQLITE_FULL.
func (c *Conn) SetMaxPageCount(ctx context.Context, pages int64) error {
	return c.Exec(ctx, fmt.Sprintf("PRAGMA max_page_count=%d", pages))
}

// LibVersion is the SQLite library version, e.g. "3.51.0".
func LibVersion() string {
	tls := libc.NewTLS()
	defer tls.Close()
	return libc.GoString(sqlite3.Xsqlite3_libversion(tls))
}

func (c *Conn) malloc(n int) uintptr {
	p := libc.Xmalloc(c.tls, types.Size_t(n))
	if p == 0 {
		panic("sqlite: out of memory")
	}
	return p
}

func (c *Conn) dbConfig(op int32, v int32) {
	const vaSlot = 8
	bp := c.malloc(2 * vaSlot)
	defer libc.Xfree(c.tls, bp)
	sqlite3.Xsqlite3_db_config(c.tls, c.db, op, libc.VaList(bp, v, uintptr(0)))
}

func (c *Conn) errorOf(rc int32) error {
	msg := libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	if c.db != 0 {
		if m := libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db)); m != "" {
			msg = m
		}
	}
	return &Error{Code: int(rc), Msg: msg}
}

// cFuncPointer turns a top-level Go function into the pointer the
// transpiled C code calls (the representation modernc.org/sqlite uses).
func cFuncPointer[T any](f T) uintptr {
	holder := &struct{ f T }{f}
	return *(*uintptr)(unsafe.Pointer(holder))
}

// authorize is SQLite's authorizer callback: it runs while a statement is
// compiled, once per operation the statement would perform.
func authorize(tls *libc.TLS, id uintptr, action int32, z1, z2, z3, z4 uintptr) int32 {
	connsMu.RLock()
	c := conns[id]
	connsMu.RUnlock()
	if c == nil {
		return sqlite3.SQLITE_DENY
	}
	p := Policy(c.policy.Load())
	if p == Trusted {
		return sqlite3.SQLITE_OK
	}
	if reason := refuse(p, action, libc.GoString(z1), libc.GoString(z2)); reason != "" {
		c.denied = reason
		return sqlite3.SQLITE_DENY
	}
	return sqlite3.SQLITE_OK
}

// refuse returns why policy p forbids the operation, or "".
func refuse(p Policy, action int32, a1, a2 string) string {
	switch action {
	case sqlite3.SQLITE_READ:
		// A pragma's table-valued function (pragma_database_list) is read
		// as a table: the same list as the PRAGMA statement decides.
		if name, ok := strings.CutPrefix(strings.ToLower(a1), "pragma_"); ok && !readPragmas[name] {
			return "PRAGMA " + name + " is not allowed"
		}
		if strings.EqualFold(a1, CallsTable) {
			return "the " + CallsTable + " table is private to the platform"
		}
		return ""
	case sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE:
		return ""
	case sqlite3.SQLITE_FUNCTION:
		if strings.EqualFold(a2, "load_extension") {
			return "extension loading is not allowed"
		}
		return ""
	case sqlite3.SQLITE_PRAGMA:
		name := strings.ToLower(a1)
		if !readPragmas[name] || (a2 != "" && !pragmaWithArgAllowed[name]) {
			return "PRAGMA " + name + " is not allowed"
		}
		return ""
	case sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT:
		return "transaction control is not allowed; the platform runs each request in its own transaction"
	case sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH:
		return "ATTACH and DETACH are not allowed"
	}
	if p == ReadOnly {
		return "the statement writes"
	}
	switch action {
	case sqlite3.SQLITE_CREATE_TEMP_INDEX, sqlite3.SQLITE_CREATE_TEMP_TABLE,
		sqlite3.SQLITE_CREATE_TEMP_TRIGGER, sqlite3.SQLITE_CREATE_TEMP_VIEW:
		return "TEMP objects are not allowed"
	case sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE,
		sqlite3.SQLITE_DROP_TABLE, sqlite3.SQLITE_CREATE_TABLE:
		return platformTable(a1)
	case sqlite3.SQLITE_ALTER_TABLE, sqlite3.SQLITE_CREATE_INDEX, sqlite3.SQLITE_DROP_INDEX,
		sqlite3.SQLITE_CREATE_TRIGGER, sqlite3.SQLITE_DROP_TRIGGER:
		// The table is the second argument here (the first is the
		// database, index or trigger name): no index, trigger or rename
		// may change how the platform's own tables behave.
		return platformTable(a2)
	}
	return ""
}

// platformTable is why a statement may not change table name, or "".
func platformTable(name string) string {
	if strings.EqualFold(name, MigrationsTable) || strings.EqualFold(name, CallsTable) {
		return "the " + name + " table is maintained by the platform"
	}
	return ""
}

// Stmt is one prepared statement.
type Stmt struct {
	c *Conn
	p uintptr
}

// transient (SQLITE_TRANSIENT) makes SQLite copy a bound value at once, so
// the Go memory it came from need only stay put for the call.
const transient = ^uintptr(0)

// outPointers is Go memory, pinned, for the C API's out-parameters.
func outPointers() (*[2]uintptr, func()) {
	out := new([2]uintptr)
	var pin runtime.Pinner
	pin.Pin(out)
	return out, pin.Unpin
}

// pinned returns the address of b's bytes (of a one-byte buffer when b is
// empty, since a NULL pointer would bind SQL NULL) held in place until unpin.
func pinned(b []byte) (uintptr, func()) {
	if len(b) == 0 {
		b = make([]byte, 1)
	}
	var pin runtime.Pinner
	pin.Pin(&b[0])
	return uintptr(unsafe.Pointer(&b[0])), pin.Unpin
}

// Prepare compiles the first statement of sql under policy and returns it
// with the rest of the text. A nil Stmt means sql held only whitespace or
// comments. A statement the policy forbids returns *Refusal.
func (c *Conn) Prepare(sql string, policy Policy) (*Stmt, string, error) {
	csql, err := libc.CString(sql)
	if err != nil {
		return nil, "", err
	}
	defer libc.Xfree(c.tls, csql)
	out, unpin := outPointers()
	defer unpin()
	c.policy.Store(int32(policy))
	c.denied = ""
	rc := sqlite3.Xsqlite3_prepare_v2(c.tls, c.db, csql, int32(len(sql)), uintptr(unsafe.Pointer(&out[0])), uintptr(unsafe.Pointer(&out[1])))
	c.policy.Store(int32(Trusted))
	if rc != sqlite3.SQLITE_OK {
		if c.denied != "" {
			return nil, "", &Refusal{Reason: c.denied}
		}
		return nil, "", c.errorOf(rc)
	}
	p := out[0]
	tail := sql[out[1]-csql:]
	if p == 0 {
		return nil, tail, nil
	}
	s := &Stmt{c: c, p: p}
	if policy == ReadOnly && sqlite3.Xsqlite3_stmt_readonly(c.tls, p) == 0 {
		s.Close()
		return nil, "", &Refusal{Reason: "the statement writes"}
	}
	return s, tail, nil
}

// Close finalizes the statement.
func (s *Stmt) Close() {
	if s.p != 0 {
		sqlite3.Xsqlite3_finalize(s.c.tls, s.p)
		s.p = 0
	}
}

// ParamCount is the number of the statement's parameters (the largest index).
func (s *Stmt) ParamCount() int { return int(sqlite3.Xsqlite3_bind_parameter_count(s.c.tls, s.p)) }

// ParamName is parameter i's name with its prefix (":a", "@a", "$a"), or ""
// for a positional "?" parameter. i counts from 1.
func (s *Stmt) ParamName(i int) string {
	return libc.GoString(sqlite3.Xsqlite3_bind_parameter_name(s.c.tls, s.p, int32(i)))
}

// Bind sets parameter i (from 1) to v: nil, int64, float64, string, []byte.
func (s *Stmt) Bind(i int, v any) error {
	t, idx := s.c.tls, int32(i)
	var rc int32
	switch x := v.(type) {
	case nil:
		rc = sqlite3.Xsqlite3_bind_null(t, s.p, idx)
	case int64:
		rc = sqlite3.Xsqlite3_bind_int64(t, s.p, idx, x)
	case float64:
		rc = sqlite3.Xsqlite3_bind_double(t, s.p, idx, x)
	case string:
		p, unpin := pinned([]byte(x))
		rc = sqlite3.Xsqlite3_bind_text(t, s.p, idx, p, int32(len(x)), transient)
		unpin()
	case []byte:
		p, unpin := pinned(x)
		rc = sqlite3.Xsqlite3_bind_blob(t, s.p, idx, p, int32(len(x)), transient)
		unpin()
	default:
		return fmt.Errorf("engine: cannot bind %T", v)
	}
	if rc != sqlite3.SQLITE_OK {
		return s.c.errorOf(rc)
	}
	return nil
}

// Column describes one result column.
type Column struct {
	Name     string `json:"name"`
	DeclType string `json:"declType"`
}

// Columns lists the statement's result columns.
func (s *Stmt) Columns() []Column {
	n := int(sqlite3.Xsqlite3_column_count(s.c.tls, s.p))
	cols := make([]Column, n)
	for i := range cols {
		cols[i] = Column{
			Name:     libc.GoString(sqlite3.Xsqlite3_column_name(s.c.tls, s.p, int32(i))),
			DeclType: libc.GoString(sqlite3.Xsqlite3_column_decltype(s.c.tls, s.p, int32(i))),
		}
	}
	return cols
}

// Step advances the statement: true when a row is ready. The context's end
// interrupts SQLite (sqlite3_interrupt), so a runaway statement stops.
func (s *Stmt) Step(ctx context.Context) (bool, error) {
	if ctx.Err() != nil {
		return false, &Error{Code: CodeInterrupt, Msg: "interrupted: " + ctx.Err().Error()}
	}
	stop := s.c.interruptOnDone(ctx)
	rc := sqlite3.Xsqlite3_step(s.c.tls, s.p)
	if stop() && rc != sqlite3.SQLITE_ROW && rc != sqlite3.SQLITE_DONE {
		// Cut short by the deadline, however SQLite noticed it (an
		// interrupt at a jump, or a value refused past the shrunk limit).
		return false, &Error{Code: CodeInterrupt, Msg: "interrupted: " + context.Cause(ctx).Error()}
	}
	switch rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	}
	return false, s.c.errorOf(rc)
}

// Value is column i of the current row: nil, int64, float64, string or []byte.
func (s *Stmt) Value(i int) any {
	t, col := s.c.tls, int32(i)
	switch sqlite3.Xsqlite3_column_type(t, s.p, col) {
	case sqlite3.SQLITE_INTEGER:
		return sqlite3.Xsqlite3_column_int64(t, s.p, col)
	case sqlite3.SQLITE_FLOAT:
		return sqlite3.Xsqlite3_column_double(t, s.p, col)
	case sqlite3.SQLITE_TEXT:
		p := sqlite3.Xsqlite3_column_text(t, s.p, col)
		n := sqlite3.Xsqlite3_column_bytes(t, s.p, col)
		return string(libc.GoBytes(p, int(n)))
	case sqlite3.SQLITE_BLOB:
		p := sqlite3.Xsqlite3_column_blob(t, s.p, col)
		n := sqlite3.Xsqlite3_column_bytes(t, s.p, col)
		b := make([]byte, n)
		if n > 0 {
			copy(b, libc.GoBytes(p, int(n)))
		}
		return b
	}
	return nil
}

// FullScanSteps counts the rows the statement stepped through in full
// table scans (SQLITE_STMTSTATUS_FULLSCAN_STEP).
func (s *Stmt) FullScanSteps() int64 {
	return int64(sqlite3.Xsqlite3_stmt_status(s.c.tls, s.p, sqlite3.SQLITE_STMTSTATUS_FULLSCAN_STEP, 0))
}

// Changes is the number of rows the last statement inserted, updated or deleted.
func (c *Conn) Changes() int64 { return sqlite3.Xsqlite3_changes64(c.tls, c.db) }

// TotalChanges counts every row changed since the connection opened; the
// difference across a statement is that statement's changes, whatever kind
// it is (sqlite3_changes keeps a stale value after DDL).
func (c *Conn) TotalChanges() int64 { return sqlite3.Xsqlite3_total_changes64(c.tls, c.db) }

// LastInsertRowID is the rowid of the last successful INSERT.
func (c *Conn) LastInsertRowID() int64 { return sqlite3.Xsqlite3_last_insert_rowid(c.tls, c.db) }

// InTransaction reports whether a transaction is open (autocommit is off).
func (c *Conn) InTransaction() bool { return sqlite3.Xsqlite3_get_autocommit(c.tls, c.db) == 0 }

// Exec runs trusted SQL (every statement of it), discarding rows.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) error {
	for {
		st, tail, err := c.Prepare(sql, Trusted)
		if err != nil {
			return err
		}
		if st == nil {
			return nil
		}
		for i, a := range args {
			if err := st.Bind(i+1, a); err != nil {
				st.Close()
				return err
			}
		}
		args = nil
		for {
			more, err := st.Step(ctx)
			if err != nil {
				st.Close()
				return err
			}
			if !more {
				break
			}
		}
		st.Close()
		sql = tail
	}
}

// QueryInt runs a trusted statement returning one integer.
func (c *Conn) QueryInt(ctx context.Context, sql string, args ...any) (int64, error) {
	st, _, err := c.Prepare(sql, Trusted)
	if err != nil {
		return 0, err
	}
	if st == nil {
		return 0, errors.New("engine: empty statement")
	}
	defer st.Close()
	for i, a := range args {
		if err := st.Bind(i+1, a); err != nil {
			return 0, err
		}
	}
	ok, err := st.Step(ctx)
	if err != nil || !ok {
		return 0, err
	}
	v, _ := st.Value(0).(int64)
	return v, nil
}

// QueryText runs a trusted statement returning one text value ("" when it
// returns no row).
func (c *Conn) QueryText(ctx context.Context, sql string, args ...any) (string, error) {
	st, _, err := c.Prepare(sql, Trusted)
	if err != nil {
		return "", err
	}
	if st == nil {
		return "", errors.New("engine: empty statement")
	}
	defer st.Close()
	for i, a := range args {
		if err := st.Bind(i+1, a); err != nil {
			return "", err
		}
	}
	ok, err := st.Step(ctx)
	if err != nil || !ok {
		return "", err
	}
	v, _ := st.Value(0).(string)
	return v, nil
}

// interruptOnDone stops the running statement when ctx ends and returns
// the function that disarms it once the call is over, reporting whether it
// had to stop it.
//
// sqlite3_interrupt alone is checked only where a program jumps (between
// rows, in loops), so a statement without a loop (one row of a thousand
// randomblob, replace or || columns) would run to its end. The stop
// therefore also shrinks the connection's SQLITE_LIMIT_LENGTH to its
// minimum: every value the statement makes next, by any function or
// operator, is then refused at once, so the statement ends within one
// value's work (milliseconds at MaxValueBytes). The disarm restores the
// limit on the statement's own goroutine before the connection runs
// anything else.
func (c *Conn) interruptOnDone(ctx context.Context) func() bool {
	if ctx.Done() == nil {
		return func() bool { return false }
	}
	var done, stopped atomic.Bool
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.imu.Lock()
			if !done.Load() {
				stopped.Store(true)
				c.interrupt()
			}
			c.imu.Unlock()
		case <-finished:
		}
	}()
	return func() bool {
		c.imu.Lock()
		done.Store(true)
		c.imu.Unlock()
		close(finished)
		if stopped.Load() {
			sqlite3.Xsqlite3_limit(c.tls, c.db, sqlite3.SQLITE_LIMIT_LENGTH, MaxValueBytes)
		}
		return stopped.Load()
	}
}

// interrupt runs on another goroutine than the statement, so with its own
// TLS (a libc.TLS is not safe for concurrent use).
func (c *Conn) interrupt() {
	if c.closed.Load() {
		return
	}
	tls := libc.NewTLS()
	// sqlite3_limit is one aligned 32-bit store into the connection, which
	// the statement's next allocation reads; SQLite documents no lock for
	// it, and the statement is stopping anyway.
	sqlite3.Xsqlite3_limit(tls, c.db, sqlite3.SQLITE_LIMIT_LENGTH, 0)
	sqlite3.Xsqlite3_interrupt(tls, c.db)
	tls.Close()
}

// IsInf reports whether f cannot be a JSON number.
func IsInf(f float64) bool { return math.IsInf(f, 0) || math.IsNaN(f) }
