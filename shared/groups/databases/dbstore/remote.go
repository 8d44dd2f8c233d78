package dbstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/databases/engine"
)

// Remote keeps each version of a database as one immutable blob and a head
// item that names the current version and holds the single-writer lease.
// It is built only on the store and blob ports (DynamoDB + S3 on AWS).
//
// A write takes the lease by a conditional update (refused as busy while
// another writer's lease runs), copies the current version from the local
// cache (downloading it if absent), applies the transaction to the copy,
// uploads it under a key unique to this write, and advances the head only
// if the head still names the old version and this writer's lease. A
// writer that dies leaves a lease that simply runs out; its upload, if any,
// is never named by the head. Reads use the cached copy of the version the
// head names, so a warm instance downloads each version at most once.
type Remote struct {
	st       store.Store
	bucket   blob.Bucket
	cache    string
	maxBytes int64
	leaseTTL time.Duration
	now      func() time.Time

	mu    sync.Mutex
	conns map[string]*cachedConn // read connection per cached version file
}

type cachedConn struct {
	mu     sync.Mutex
	conn   *engine.Conn
	closed bool // forgotten: its version was superseded
}

// RemoteOption adjusts a Remote.
type RemoteOption func(*Remote)

// WithLeaseTTL sets how long a writer's lease lasts (default 30 s).
func WithLeaseTTL(d time.Duration) RemoteOption { return func(r *Remote) { r.leaseTTL = d } }

// WithClock sets the clock leases are measured by.
func WithClock(now func() time.Time) RemoteOption { return func(r *Remote) { r.now = now } }

// WithMaxBytes caps each database's size (default DefaultMaxBytes).
func WithMaxBytes(n int64) RemoteOption { return func(r *Remote) { r.maxBytes = n } }

// NewRemote builds the adapter; cacheDir holds local copies (Lambda's /tmp).
func NewRemote(st store.Store, bucket blob.Bucket, cacheDir string, opts ...RemoteOption) (*Remote, error) {
	r := &Remote{st: st, bucket: bucket, cache: cacheDir, maxBytes: DefaultMaxBytes,
		leaseTTL: 30 * time.Second, now: time.Now, conns: map[string]*cachedConn{}}
	for _, o := range opts {
		o(r)
	}
	return r, os.MkdirAll(cacheDir, 0o700)
}

// Head item attributes.
const (
	attrVersion    = "version"
	attrBlobKey    = "blobKey"
	attrPrevKey    = "prevKey"
	attrSize       = "sizeBytes"
	attrLeaseOwner = "leaseOwner"
	attrLeaseUntil = "leaseUntil" // unix milliseconds
)

func headKey(dbID string) store.Key { return store.Key{PK: "dbhead#" + dbID, SK: "head"} }

type head struct {
	version int64
	blobKey string
	prevKey string
	size    int64
}

func headOf(it store.Item) head {
	return head{version: it.Int(attrVersion), blobKey: it.String(attrBlobKey),
		prevKey: it.String(attrPrevKey), size: it.Int(attrSize)}
}

func (r *Remote) readHead(ctx context.Context, dbID string) (head, error) {
	it, err := r.st.Get(ctx, headKey(dbID))
	if errors.Is(err, store.ErrNotFound) {
		return head{}, nil
	}
	if err != nil {
		return head{}, err
	}
	return headOf(it), nil
}

func (r *Remote) busy() error { return &BusyError{RetryAfter: retryAfter} }

// acquire takes the lease and returns the head as it stands under it.
func (r *Remote) acquire(ctx context.Context, dbID, token string) (head, error) {
	now := r.now().UnixMilli()
	until := now + r.leaseTTL.Milliseconds()
	k := headKey(dbID)
	it, err := r.st.Get(ctx, k)
	switch {
	case errors.Is(err, store.ErrNotFound):
		fresh := store.NewItem(k)
		fresh[attrVersion] = int64(0)
		fresh[attrLeaseOwner] = token
		fresh[attrLeaseUntil] = until
		if err := r.st.Put(ctx, fresh, store.NotExists()); err != nil {
			if errors.Is(err, store.ErrConditionFailed) {
				return head{}, r.busy()
			}
			return head{}, err
		}
		return head{}, nil
	case err != nil:
		return head{}, err
	}
	conds := []store.Cond{store.Exists(), store.AttrNotExists(attrLeaseOwner)}
	if it.Has(attrLeaseOwner) {
		if it.Int(attrLeaseUntil) > now {
			return head{}, r.busy()
		}
		// The holder's lease ran out: take it over, but only from that holder.
		conds = []store.Cond{store.AttrEquals(attrLeaseOwner, it.String(attrLeaseOwner)),
			store.AttrEquals(attrLeaseUntil, it.Int(attrLeaseUntil))}
	}
	got, err := r.st.Update(ctx, k, store.Update{Set: map[string]any{attrLeaseOwner: token, attrLeaseUntil: until}}, conds...)
	if errors.Is(err, store.ErrConditionFailed) {
		return head{}, r.busy()
	}
	if err != nil {
		// The lease may have been taken all the same; give it back rather
		// than leave every writer busy until it runs out.
		r.release(dbID, token)
		return head{}, err
	}
	return headOf(got), nil
}

// release drops the lease if this writer still holds it.
func (r *Remote) release(dbID, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = r.st.Update(ctx, headKey(dbID), store.Update{Remove: []string{attrLeaseOwner, attrLeaseUntil}},
		store.AttrEquals(attrLeaseOwner, token))
}

// local returns the path of the cached copy of h's version, downloading it
// (or creating the empty version 0) if absent. Cached files never change.
func (r *Remote) local(ctx context.Context, dbID string, h head) (string, error) {
	dir := filepath.Join(r.cache, dbID)
	path := filepath.Join(dir, fmt.Sprintf("v%d.sqlite", h.version))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "dl-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if h.blobKey != "" {
		rc, _, err := r.bucket.Get(ctx, h.blobKey)
		if err != nil {
			tmp.Close()
			return "", err
		}
		_, err = io.Copy(tmp, rc)
		rc.Close()
		if err != nil {
			tmp.Close()
			return "", err
		}
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if h.blobKey == "" {
		// Version 0: an empty database, made a real file so it can be read.
		if err := stampVersion(ctx, tmp.Name(), 0, "DELETE"); err != nil {
			return "", err
		}
	}
	return path, os.Rename(tmp.Name(), path)
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (r *Remote) Write(ctx context.Context, dbID string, fn WriteFunc) (int64, error) {
	return r.publish(ctx, dbID, func(path string, h head) (int64, error) {
		c, err := engine.Open(path, false)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return applyWrite(ctx, c, r.maxBytes, fn)
	}, true)
}

func (r *Remote) Replace(ctx context.Context, dbID, src string) (int64, error) {
	return r.publish(ctx, dbID, func(path string, h head) (int64, error) {
		if err := os.Rename(src, path); err != nil {
			return 0, err
		}
		return h.version + 1, stampVersion(ctx, path, h.version+1, "DELETE")
	}, false)
}

// publish runs the lease protocol around produce, which turns the working
// file (a copy of the current version when fromCurrent) into the next
// version and returns its number.
func (r *Remote) publish(ctx context.Context, dbID string, produce func(path string, h head) (int64, error), fromCurrent bool) (int64, error) {
	token := newToken()
	h, err := r.acquire(ctx, dbID, token)
	if err != nil {
		return 0, err
	}
	defer r.release(dbID, token)
	dir := filepath.Join(r.cache, dbID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	work := filepath.Join(dir, "w-"+token+".sqlite")
	defer os.Remove(work)
	if fromCurrent {
		cur, err := r.local(ctx, dbID, h)
		if err != nil {
			return 0, err
		}
		if err := copyFile(work, cur); err != nil {
			return 0, err
		}
	}
	version, err := produce(work, h)
	if errors.Is(err, ErrUnchanged) {
		return h.version, nil // nothing to publish
	}
	if err != nil {
		return 0, err
	}
	info, err := os.Stat(work)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(work)
	if err != nil {
		return 0, err
	}
	key := fmt.Sprintf("databases/%s/v%020d-%s.sqlite", dbID, version, token)
	_, err = r.bucket.Put(ctx, key, f, blob.PutOptions{ContentType: "application/vnd.sqlite3", IfNotExists: true})
	f.Close()
	if err != nil {
		return 0, err
	}
	_, err = r.st.Update(ctx, headKey(dbID), store.Update{
		Set:    map[string]any{attrVersion: version, attrBlobKey: key, attrPrevKey: h.blobKey, attrSize: info.Size()},
		Remove: []string{attrLeaseOwner, attrLeaseUntil},
	}, store.AttrEquals(attrVersion, h.version), store.AttrEquals(attrLeaseOwner, token))
	if err != nil {
		if err := r.settle(dbID, token, key, err); err != nil {
			return 0, err
		}
	}
	// The head moved: keep this version in the cache and drop the one
	// before the previous (a reader may still be fetching the previous).
	_ = os.Rename(work, filepath.Join(dir, fmt.Sprintf("v%d.sqlite", version)))
	if h.prevKey != "" {
		_ = r.bucket.Delete(context.Background(), h.prevKey)
	}
	r.forget(dbID, h.version)
	return version, nil
}

// errOutcomeUnknown: the head's update failed without an answer and its
// outcome could not be read either; the version may yet be current, so its
// blob is kept and nothing may be said to be unchanged.
var errOutcomeUnknown = errors.New("dbstore: the new version's publication has no known outcome")

// settle decides a head update that failed (failed) with key as its new
// version: the write is acknowledged exactly when the head names key.
// A failure without an answer may have applied, or may still apply (a
// request whose answer was lost): the lease is fenced first, a removal
// conditional on this writer's token, after which the update, conditional
// on the same token, can no longer apply. A failed condition needs no
// fence: it may be the resend of an update whose first attempt applied,
// and otherwise another writer owns the head, so this one can never
// apply. Either way the head then says which it was. Only a version the
// head cannot name loses its blob, so a reader never finds the current
// version's blob deleted.
func (r *Remote) settle(dbID, token, key string, failed error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lost := func() error {
		_ = r.bucket.Delete(ctx, key)
		return r.busy()
	}
	if !errors.Is(failed, store.ErrConditionFailed) {
		_, err := r.st.Update(ctx, headKey(dbID), store.Update{Remove: []string{attrLeaseOwner, attrLeaseUntil}},
			store.AttrEquals(attrLeaseOwner, token))
		switch {
		case err == nil:
			return lost() // fenced before the update applied: it never will
		case !errors.Is(err, store.ErrConditionFailed):
			return fmt.Errorf("%w: %w", errOutcomeUnknown, failed)
		}
	}
	h, err := r.readHead(ctx, dbID)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", errOutcomeUnknown, failed)
	case h.blobKey == key:
		return nil // it applied; only its answer was lost
	}
	return lost()
}

// forget closes and removes the cached copy of an old version.
func (r *Remote) forget(dbID string, version int64) {
	path := filepath.Join(r.cache, dbID, fmt.Sprintf("v%d.sqlite", version))
	r.mu.Lock()
	cc := r.conns[path]
	delete(r.conns, path)
	r.mu.Unlock()
	if cc != nil {
		cc.mu.Lock()
		cc.closed = true
		cc.conn.Close()
		cc.mu.Unlock()
	}
	os.Remove(path)
}

// reader returns the read connection on the current version's cached copy.
func (r *Remote) reader(ctx context.Context, dbID string) (*cachedConn, error) {
	var lastErr error
	for range 3 {
		h, err := r.readHead(ctx, dbID)
		if err != nil {
			return nil, err
		}
		path, err := r.local(ctx, dbID, h)
		if errors.Is(err, blob.ErrNotFound) {
			lastErr = err // that version was superseded while we looked; look again
			continue
		}
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		cc := r.conns[path]
		if cc == nil {
			c, err := engine.Open(path, true)
			if err != nil {
				r.mu.Unlock()
				return nil, err
			}
			cc = &cachedConn{conn: c}
			r.conns[path] = cc
		}
		r.mu.Unlock()
		return cc, nil
	}
	return nil, lastErr
}

func (r *Remote) Read(ctx context.Context, dbID string, fn ReadFunc) error {
	return r.withReader(ctx, dbID, func(c *engine.Conn) error { return readAt(ctx, c, fn) })
}

// withReader runs fn on the current version's read connection, looking
// again if a newer version retired the connection in the meantime.
func (r *Remote) withReader(ctx context.Context, dbID string, fn func(c *engine.Conn) error) error {
	for {
		cc, err := r.reader(ctx, dbID)
		if err != nil {
			return err
		}
		cc.mu.Lock()
		if cc.closed {
			cc.mu.Unlock()
			continue
		}
		err = fn(cc.conn)
		cc.mu.Unlock()
		return err
	}
}

func (r *Remote) Stat(ctx context.Context, dbID string) (Stat, error) {
	h, err := r.readHead(ctx, dbID)
	if err != nil {
		return Stat{}, err
	}
	return Stat{Version: h.version, SizeBytes: h.size}, nil
}

func (r *Remote) Snapshot(ctx context.Context, dbID, dst string) (int64, error) {
	for {
		h, err := r.readHead(ctx, dbID)
		if err != nil {
			return 0, err
		}
		path, err := r.local(ctx, dbID, h)
		if errors.Is(err, blob.ErrNotFound) {
			continue // superseded while we looked
		}
		if err != nil {
			return 0, err
		}
		v, err := snapshotFile(ctx, path, dst)
		if errors.Is(err, os.ErrNotExist) || engine.IsCode(err, engine.CodeCantOpen) {
			continue // the cached copy was retired by a newer version
		}
		return v, err
	}
}

// Drop deletes the head and the blobs it names. A blob of a writer that
// died mid-write stays behind unnamed; the bucket's lifecycle rule for the
// databases/ prefix is what reclaims such orphans.
func (r *Remote) Drop(ctx context.Context, dbID string) error {
	h, err := r.readHead(ctx, dbID)
	if err != nil {
		return err
	}
	if err := r.st.Delete(ctx, headKey(dbID)); err != nil {
		return err
	}
	for _, k := range []string{h.blobKey, h.prevKey} {
		if k != "" {
			if err := r.bucket.Delete(ctx, k); err != nil {
				return err
			}
		}
	}
	r.forget(dbID, h.version)
	return os.RemoveAll(filepath.Join(r.cache, dbID))
}

// Close closes the cached read connections.
func (r *Remote) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, cc := range r.conns {
		cc.mu.Lock()
		cc.closed = true
		cc.conn.Close()
		cc.mu.Unlock()
		delete(r.conns, p)
	}
	return nil
}

var _ Storage = (*Remote)(nil)
