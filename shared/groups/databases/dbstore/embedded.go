package dbstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"platformapi/shared/groups/databases/engine"
)

// Embedded keeps each database as one SQLite file in WAL mode under a
// directory (DATA_DIR/databases). One writer per database: an in-process
// mutex orders this process's writers and SQLite's file lock (BEGIN
// IMMEDIATE) orders processes. Readers never block the writer (WAL).
//
// An import swaps files, so the live file is named by a generation kept in
// the CURRENT file next to it; renaming CURRENT is the atomic switch.
type Embedded struct {
	root     string
	maxBytes int64
	readers  int

	mu  sync.Mutex
	dbs map[string]*embeddedDB
}

type embeddedDB struct {
	mu     sync.Mutex // the single writer
	gen    int64
	writer *engine.Conn
	pool   chan *pooled // idle read connections
}

type pooled struct {
	gen  int64
	conn *engine.Conn
}

// NewEmbedded stores databases under root, each capped at maxBytes (0 means
// DefaultMaxBytes).
func NewEmbedded(root string, maxBytes int64) (*Embedded, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	return &Embedded{root: root, maxBytes: maxBytes, readers: 8, dbs: map[string]*embeddedDB{}}, nil
}

func (e *Embedded) dir(dbID string) string { return filepath.Join(e.root, dbID) }

func (e *Embedded) file(dbID string, gen int64) string {
	return filepath.Join(e.dir(dbID), fmt.Sprintf("db-%d.sqlite", gen))
}

// open returns the database's state with its writer connection open,
// creating the file on first use. Called with d.mu held.
func (e *Embedded) open(dbID string) *embeddedDB {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.dbs[dbID]
	if d == nil {
		d = &embeddedDB{pool: make(chan *pooled, e.readers)}
		e.dbs[dbID] = d
	}
	return d
}

// ensureWriter opens the live generation's writer. Called with d.mu held.
func (e *Embedded) ensureWriter(ctx context.Context, dbID string, d *embeddedDB) error {
	gen, err := e.currentGen(dbID)
	if err != nil {
		return err
	}
	if d.writer != nil && d.gen == gen {
		return nil
	}
	if d.writer != nil {
		d.writer.Close()
		d.writer = nil
	}
	if err := os.MkdirAll(e.dir(dbID), 0o700); err != nil {
		return err
	}
	c, err := engine.Open(e.file(dbID, gen), false)
	if err != nil {
		return err
	}
	c.SetBusyTimeout(5000)
	if err := c.Exec(ctx, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"); err != nil {
		c.Close()
		return err
	}
	d.writer, d.gen = c, gen
	return nil
}

// currentGen reads CURRENT; absent means generation 1.
func (e *Embedded) currentGen(dbID string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(e.dir(dbID), "CURRENT"))
	if errors.Is(err, os.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

func (e *Embedded) Write(ctx context.Context, dbID string, fn WriteFunc) (int64, error) {
	d := e.open(dbID)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := e.ensureWriter(ctx, dbID, d); err != nil {
		return 0, err
	}
	version, err := applyWrite(ctx, d.writer, e.maxBytes, fn)
	if errors.Is(err, ErrUnchanged) {
		return version, nil
	}
	return version, err
}

// reader takes an idle read connection on the live generation or opens one.
func (e *Embedded) reader(ctx context.Context, dbID string) (*embeddedDB, *pooled, error) {
	d := e.open(dbID)
	d.mu.Lock()
	err := e.ensureWriter(ctx, dbID, d) // creates the file and its WAL on first use
	gen := d.gen
	d.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	for {
		select {
		case p := <-d.pool:
			if p.gen == gen {
				return d, p, nil
			}
			p.conn.Close()
			continue
		default:
		}
		c, err := engine.Open(e.file(dbID, gen), true)
		if err != nil {
			return nil, nil, err
		}
		return d, &pooled{gen: gen, conn: c}, nil
	}
}

func (e *Embedded) release(d *embeddedDB, p *pooled) {
	select {
	case d.pool <- p:
	default:
		p.conn.Close()
	}
}

func (e *Embedded) Read(ctx context.Context, dbID string, fn ReadFunc) error {
	d, p, err := e.reader(ctx, dbID)
	if err != nil {
		return err
	}
	defer e.release(d, p)
	return readAt(ctx, p.conn, fn)
}

func (e *Embedded) Stat(ctx context.Context, dbID string) (Stat, error) {
	var st Stat
	err := e.Read(ctx, dbID, func(c *engine.Conn, version int64) error {
		size, err := fileSize(ctx, c)
		st = Stat{Version: version, SizeBytes: size}
		return err
	})
	return st, err
}

func (e *Embedded) Snapshot(ctx context.Context, dbID, dst string) (int64, error) {
	d := e.open(dbID)
	d.mu.Lock()
	err := e.ensureWriter(ctx, dbID, d)
	path := e.file(dbID, d.gen)
	d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return snapshotFile(ctx, path, dst)
}

// Replace stamps src with the next version, moves it in as the next
// generation and switches CURRENT to it by rename. Readers still on the old
// generation finish there; the next ones open the new file.
func (e *Embedded) Replace(ctx context.Context, dbID, src string) (int64, error) {
	d := e.open(dbID)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := e.ensureWriter(ctx, dbID, d); err != nil {
		return 0, err
	}
	version, err := d.writer.QueryInt(ctx, "PRAGMA user_version")
	if err != nil {
		return 0, err
	}
	if err := stampVersion(ctx, src, version+1, "WAL"); err != nil {
		return 0, err
	}
	next := d.gen + 1
	if err := os.Rename(src, e.file(dbID, next)); err != nil {
		return 0, err
	}
	tmp := filepath.Join(e.dir(dbID), "CURRENT.tmp")
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(next, 10)), 0o600); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, filepath.Join(e.dir(dbID), "CURRENT")); err != nil {
		return 0, err
	}
	old := d.gen
	d.writer.Close()
	d.writer = nil
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(e.file(dbID, old) + suffix)
	}
	return version + 1, e.ensureWriter(ctx, dbID, d)
}

func (e *Embedded) Drop(ctx context.Context, dbID string) error {
	d := e.open(dbID)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.writer != nil {
		d.writer.Close()
		d.writer = nil
	}
	for len(d.pool) > 0 {
		(<-d.pool).conn.Close()
	}
	e.mu.Lock()
	delete(e.dbs, dbID)
	e.mu.Unlock()
	return os.RemoveAll(e.dir(dbID))
}

// Close closes every open connection.
func (e *Embedded) Close() error {
	e.mu.Lock()
	ids := make([]string, 0, len(e.dbs))
	for id := range e.dbs {
		ids = append(ids, id)
	}
	e.mu.Unlock()
	for _, id := range ids {
		e.mu.Lock()
		d := e.dbs[id]
		e.mu.Unlock()
		d.mu.Lock()
		if d.writer != nil {
			d.writer.Close()
			d.writer = nil
		}
		d.mu.Unlock()
		for len(d.pool) > 0 {
			(<-d.pool).conn.Close()
		}
	}
	return nil
}

var _ Storage = (*Embedded)(nil)
