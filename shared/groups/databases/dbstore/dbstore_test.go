package dbstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/groups/databases/dbstore"
	"platformapi/shared/groups/databases/engine"
)

// backend opens a fresh Storage.
type backend struct {
	name string
	open func(t *testing.T, opts ...dbstore.RemoteOption) dbstore.Storage
}

// backends lists the adapters: embedded always, the remote adapter on the
// embedded ports always and on DynamoDB + S3 when an emulator is set.
func backends() []backend {
	out := []backend{{"embedded", func(t *testing.T, _ ...dbstore.RemoteOption) dbstore.Storage {
		e, err := dbstore.NewEmbedded(filepath.Join(t.TempDir(), "databases"), 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}}}
	for _, sb := range teststores.All() {
		out = append(out, backend{"remote-" + sb.Name, func(t *testing.T, opts ...dbstore.RemoteOption) dbstore.Storage {
			st := sb.Open(t, time.Now)
			var bucket interface{ Close() error }
			var r *dbstore.Remote
			var err error
			if sb.Name == teststores.Embedded.Name {
				b, berr := fsblob.Open(t.TempDir())
				if berr != nil {
					t.Fatal(berr)
				}
				bucket = b
				r, err = dbstore.NewRemote(st, b, t.TempDir(), opts...)
			} else {
				env := awstest.Env(t)
				client, name := awstest.Bucket(t, env)
				b := s3blob.New(client, name)
				bucket = b
				r, err = dbstore.NewRemote(st, b, t.TempDir(), opts...)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); bucket.Close() })
			return r
		}})
	}
	return out
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return c
}

func increment(c *engine.Conn, _ int64) error {
	return c.Exec(context.Background(), "CREATE TABLE IF NOT EXISTS counter(n INTEGER NOT NULL); INSERT INTO counter SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM counter); UPDATE counter SET n = n + 1")
}

func count(t *testing.T, s dbstore.Storage, id string) (n, version int64) {
	t.Helper()
	err := s.Read(ctx(t), id, func(c *engine.Conn, v int64) error {
		version = v
		var err error
		n, err = c.QueryInt(context.Background(), "SELECT n FROM counter")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, version
}

func TestRacingWritersNeverLoseAnUpdate(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			const writers = 16
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						_, err := s.Write(ctx(t), "db_race", increment)
						var busy *dbstore.BusyError
						if errors.As(err, &busy) {
							time.Sleep(time.Duration(5+time.Now().UnixNano()%20) * time.Millisecond)
							continue
						}
						errs <- err
						return
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			n, version := count(t, s, "db_race")
			if n != writers || version != writers {
				t.Fatalf("count %d version %d, want %d", n, version, writers)
			}
		})
	}
}

func TestAFailedWriteChangesNothing(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			if _, err := s.Write(ctx(t), "db_x", increment); err != nil {
				t.Fatal(err)
			}
			boom := errors.New("boom")
			_, err := s.Write(ctx(t), "db_x", func(c *engine.Conn, v int64) error {
				if err := increment(c, v); err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("err %v", err)
			}
			if n, v := count(t, s, "db_x"); n != 1 || v != 1 {
				t.Fatalf("count %d version %d", n, v)
			}
		})
	}
}

func TestAWriteBeyondTheSizeCapIsFull(t *testing.T) {
	e, err := dbstore.NewEmbedded(t.TempDir(), 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Write(ctx(t), "db_f", func(c *engine.Conn, _ int64) error {
		return c.Exec(context.Background(), "CREATE TABLE b(x); WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i < 100) INSERT INTO b SELECT randomblob(4096) FROM r")
	})
	if !errors.Is(err, dbstore.ErrFull) {
		t.Fatalf("err %v", err)
	}
}

func TestADeadWritersLeaseExpires(t *testing.T) {
	for _, b := range backends()[1:] {
		t.Run(b.name, func(t *testing.T) {
			var mu sync.Mutex
			now := time.Now()
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			s := b.open(t, dbstore.WithClock(clock), dbstore.WithLeaseTTL(10*time.Second))
			// A writer that hangs inside its transaction holds the lease.
			hold, held := make(chan struct{}), make(chan struct{})
			go s.Write(context.Background(), "db_l", func(c *engine.Conn, _ int64) error {
				close(held)
				<-hold
				return errors.New("died")
			})
			<-held
			var busy *dbstore.BusyError
			if _, err := s.Write(ctx(t), "db_l", increment); !errors.As(err, &busy) {
				t.Fatalf("want busy, got %v", err)
			}
			mu.Lock()
			now = now.Add(11 * time.Second)
			mu.Unlock()
			if _, err := s.Write(ctx(t), "db_l", increment); err != nil {
				t.Fatalf("after expiry: %v", err)
			}
			close(hold)
			if n, _ := count(t, s, "db_l"); n != 1 {
				t.Fatalf("count %d", n)
			}
		})
	}
}

func TestSnapshotAndReplaceRoundTrip(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			for range 3 {
				if _, err := s.Write(ctx(t), "db_s", increment); err != nil {
					t.Fatal(err)
				}
			}
			snap := filepath.Join(t.TempDir(), "snap.sqlite")
			v, err := s.Snapshot(ctx(t), "db_s", snap)
			if err != nil || v != 3 {
				t.Fatalf("snapshot v%d %v", v, err)
			}
			if _, err := s.Write(ctx(t), "db_s", increment); err != nil {
				t.Fatal(err)
			}
			nv, err := s.Replace(ctx(t), "db_s", snap)
			if err != nil || nv != 5 {
				t.Fatalf("replace v%d %v", nv, err)
			}
			if n, v := count(t, s, "db_s"); n != 3 || v != 5 {
				t.Fatalf("count %d version %d", n, v)
			}
			if _, err := os.Stat(snap); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("source not consumed: %v", err)
			}
			if err := s.Drop(ctx(t), "db_s"); err != nil {
				t.Fatal(err)
			}
			st, err := s.Stat(ctx(t), "db_s")
			if err != nil || st.Version != 0 {
				t.Fatalf("after drop %+v %v", st, err)
			}
		})
	}
}

func TestAnUnchangedWriteKeepsTheVersionAndRollsBack(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			if _, err := s.Write(ctx(t), "db_same", increment); err != nil {
				t.Fatal(err)
			}
			version, err := s.Write(ctx(t), "db_same", func(c *engine.Conn, v int64) error {
				if err := increment(c, v); err != nil {
					return err
				}
				return dbstore.ErrUnchanged
			})
			if err != nil || version != 1 {
				t.Fatalf("unchanged write: version %d, %v", version, err)
			}
			if n, v := count(t, s, "db_same"); n != 1 || v != 1 {
				t.Fatalf("count %d version %d after an unchanged write", n, v)
			}
			if st, err := s.Stat(ctx(t), "db_same"); err != nil || st.Version != 1 {
				t.Fatalf("stat %+v %v", st, err)
			}
		})
	}
}

// lostAnswers fails the next publication of a head (the update that names a
// new version's blob) without an answer, applying it first or not at all,
// as a request whose answer was lost or that never arrived.
type lostAnswers struct {
	store.Store
	armed, apply bool
	// resend: the update applied and the SDK's resend of it failed its
	// condition, which is all the writer hears.
	resend bool
}

func (l *lostAnswers) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	if _, publishes := u.Set["blobKey"]; l.armed && publishes {
		l.armed = false
		if l.apply {
			if _, err := l.Store.Update(ctx, k, u, conds...); err != nil {
				return nil, err
			}
		}
		if l.resend {
			return l.Store.Update(ctx, k, u, conds...)
		}
		return nil, fmt.Errorf("publish: %w", store.ErrUnavailable)
	}
	return l.Store.Update(ctx, k, u, conds...)
}

// A write is acknowledged exactly when the head names its version: a
// publication whose answer was lost after it applied (or whose resend then
// failed its condition) is a success, with its blob kept (readers find
// it), and one that never applied is an error
// that changed nothing, after which the next write goes on at once (its
// lease was given back). On the remote adapter over both stores.
func TestAWriteIsAcknowledgedExactlyWhenTheHeadNamesIt(t *testing.T) {
	for _, sb := range teststores.All() {
		t.Run(sb.Name, func(t *testing.T) {
			for _, c := range []struct{ applied, resend bool }{{true, false}, {false, false}, {true, true}} {
				applied := c.applied
				st := &lostAnswers{Store: sb.Open(t, time.Now), resend: c.resend}
				b, err := fsblob.Open(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				r, err := dbstore.NewRemote(st, b, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if _, err := r.Write(ctx(t), "db_lost", increment); err != nil {
					t.Fatal(err)
				}
				st.armed, st.apply = true, applied
				_, err = r.Write(ctx(t), "db_lost", increment)
				if applied != (err == nil) {
					t.Fatalf("applied %v: the write answered %v", applied, err)
				}
				// A fresh instance (an empty cache) reads what the head names.
				fresh, err := dbstore.NewRemote(st, b, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				defer fresh.Close()
				want := int64(1)
				if applied {
					want = 2
				}
				if n, v := count(t, fresh, "db_lost"); n != want || v != want {
					t.Fatalf("applied %v: counter %d at version %d; want %d", applied, n, v, want)
				}
				if _, err := fresh.Write(ctx(t), "db_lost", increment); err != nil {
					t.Fatalf("applied %v: the next write: %v", applied, err)
				}
			}
		})
	}
}
