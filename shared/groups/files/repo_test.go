package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/domain/paging"
)

const (
	acctA, acctB = "acct_A", "acct_B"
	prjA, prjB   = "prj_A", "prj_B"
)

func TestCreateStoresTheBytesWithTheirSHA256(t *testing.T) {
	eachBackend(t, DefaultQuota, func(t *testing.T, f *fixture) {
		data := []byte("hello, files")
		u := Upload{Filename: "€ hello.txt", ContentType: "text/plain; charset=utf-8", Purpose: "notes", SHA256: hexSHA(data)}
		file := mustCreate(t, f.repo, acctA, prjA, data, u)
		if !strings.HasPrefix(file.ID, "file_") || *file.ProjectID != prjA || file.Filename != u.Filename ||
			file.ContentType != u.ContentType || file.SizeBytes != int64(len(data)) || file.SHA256 != hexSHA(data) ||
			*file.Purpose != "notes" || !file.CreatedAt.Equal(f.clock.Now()) || file.Status != "" {
			t.Fatalf("file = %+v", file)
		}
		got, err := f.repo.Get(ctx(t), acctA, prjA, file.ID)
		if err != nil || *got.ProjectID != prjA || got.SHA256 != file.SHA256 || got.Filename != file.Filename {
			t.Fatalf("Get = %+v, %v", got, err)
		}
		rec, body, err := f.repo.Open(ctx(t), acctA, prjA, file.ID)
		if err != nil || !bytes.Equal(body, data) || rec.ID != file.ID {
			t.Fatalf("Open = %q, %v", body, err)
		}
		if u := held(t, f, acctA, prjA); u != (usage{files: 1, bytes: int64(len(data))}) {
			t.Fatalf("usage = %+v", u)
		}
		account := mustCreate(t, f.repo, acctA, "", data, upload("top.txt"))
		if account.ProjectID != nil || account.Purpose != nil {
			t.Fatalf("account-level file = %+v; want null projectId and purpose", account)
		}
	})
}

func TestAChecksumMismatchLeavesNothingBehind(t *testing.T) {
	eachBackend(t, DefaultQuota, func(t *testing.T, f *fixture) {
		data := []byte("the real bytes")
		u := upload("a.txt")
		u.SHA256, u.Purpose = hexSHA([]byte("other bytes")), "p"
		_, err := f.repo.Create(ctx(t), acctA, prjA, bytes.NewReader(data), u)
		wantCode(t, err, apierr.ChecksumMismatch)
		if got := objects(t, f.bucket); len(got) != 0 {
			t.Fatalf("objects left: %v", got)
		}
		for _, purpose := range []string{"", "p"} {
			if list, _, err := f.repo.List(ctx(t), acctA, prjA, purpose, 0, ""); err != nil || len(list) != 0 {
				t.Fatalf("List(%q) = %v, %v", purpose, list, err)
			}
		}
		if u := held(t, f, acctA, prjA); u != (usage{}) {
			t.Fatalf("quota used: %+v", u)
		}
	})
}

func TestABodyOutsideOneByteToFourMiBStoresNothing(t *testing.T) {
	eachBackend(t, DefaultQuota, func(t *testing.T, f *fixture) {
		for _, c := range []struct {
			size int
			code apierr.Code
		}{{0, apierr.ValidationFailed}, {MaxSize + 1, apierr.PayloadTooLarge}} {
			_, err := f.repo.Create(ctx(t), acctA, prjA, bytes.NewReader(make([]byte, c.size)), upload("x"))
			wantCode(t, err, c.code)
		}
		if got := objects(t, f.bucket); len(got) != 0 {
			t.Fatalf("objects left: %v", got)
		}
		if u := held(t, f, acctA, prjA); u != (usage{}) {
			t.Fatalf("quota used: %+v", u)
		}
		file := mustCreate(t, f.repo, acctA, prjA, make([]byte, MaxSize), upload("max"))
		if file.SizeBytes != MaxSize {
			t.Fatalf("size = %d", file.SizeBytes)
		}
	})
}

func TestTheQuotaIsExactUnderConcurrentUploads(t *testing.T) {
	const racers, size = 16, 100
	for _, c := range []struct {
		name  string
		quota Quota
		want  int
	}{
		{"files", Quota{MaxFiles: 5, MaxBytes: 1 << 20}, 5},
		{"bytes", Quota{MaxFiles: 100, MaxBytes: 4*size - 1}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachBackend(t, c.quota, func(t *testing.T, f *fixture) {
				var wg sync.WaitGroup
				errs := make(chan error, racers)
				for i := range racers {
					wg.Go(func() {
						_, err := f.repo.Create(ctx(t), acctA, prjA, bytes.NewReader(bytes.Repeat([]byte{byte(i)}, size)), upload(fmt.Sprint(i)))
						errs <- err
					})
				}
				wg.Wait()
				close(errs)
				ok := 0
				for err := range errs {
					if err == nil {
						ok++
						continue
					}
					wantCode(t, err, apierr.QuotaExceeded)
				}
				if ok != c.want {
					t.Fatalf("%d uploads admitted; want %d", ok, c.want)
				}
				if got := objects(t, f.bucket); len(got) != c.want {
					t.Fatalf("%d objects stored; want %d (refused uploads must delete theirs)", len(got), c.want)
				}
				if u := held(t, f, acctA, prjA); u != (usage{files: int64(c.want), bytes: int64(c.want * size)}) {
					t.Fatalf("usage = %+v", u)
				}
			})
		})
	}
}

func TestDeleteRemovesRecordQuotaAndObject(t *testing.T) {
	eachBackend(t, Quota{MaxFiles: 1, MaxBytes: 1 << 20}, func(t *testing.T, f *fixture) {
		u := upload("a.txt")
		u.Purpose = "p"
		file := mustCreate(t, f.repo, acctA, prjA, []byte("abc"), u)
		_, err := f.repo.Create(ctx(t), acctA, prjA, strings.NewReader("more"), upload("b.txt"))
		wantCode(t, err, apierr.QuotaExceeded)
		gone, err := f.repo.Delete(ctx(t), acctA, prjA, file.ID)
		if err != nil || gone.Status != StatusDeleted || gone.ID != file.ID || gone.SHA256 != file.SHA256 {
			t.Fatalf("Delete = %+v, %v", gone, err)
		}
		_, err = f.repo.Get(ctx(t), acctA, prjA, file.ID)
		wantCode(t, err, apierr.NotFound)
		_, _, err = f.repo.Open(ctx(t), acctA, prjA, file.ID)
		wantCode(t, err, apierr.NotFound)
		_, err = f.repo.Delete(ctx(t), acctA, prjA, file.ID)
		wantCode(t, err, apierr.NotFound)
		for _, purpose := range []string{"", "p"} {
			if list, _, err := f.repo.List(ctx(t), acctA, prjA, purpose, 0, ""); err != nil || len(list) != 0 {
				t.Fatalf("List(%q) after delete = %v, %v", purpose, fileIDs(list), err)
			}
		}
		if got := objects(t, f.bucket); len(got) != 0 {
			t.Fatalf("objects left: %v", got)
		}
		if u := held(t, f, acctA, prjA); u != (usage{}) {
			t.Fatalf("usage after delete = %+v", u)
		}
		mustCreate(t, f.repo, acctA, prjA, []byte("room again"), upload("c.txt"))
	})
}

func TestConcurrentDeletionsFreeTheQuotaOnce(t *testing.T) {
	eachBackend(t, DefaultQuota, func(t *testing.T, f *fixture) {
		file := mustCreate(t, f.repo, acctA, prjA, []byte("abc"), upload("a"))
		mustCreate(t, f.repo, acctA, prjA, []byte("defg"), upload("b"))
		var wg sync.WaitGroup
		var mu sync.Mutex
		deleted := 0
		for range 4 {
			wg.Go(func() {
				_, err := f.repo.Delete(ctx(t), acctA, prjA, file.ID)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					deleted++
				} else if ae := (*apierr.Error)(nil); !errors.As(err, &ae) || ae.Code != apierr.NotFound {
					t.Errorf("Delete: %v", err)
				}
			})
		}
		wg.Wait()
		if deleted != 1 {
			t.Fatalf("%d deletions succeeded; want 1", deleted)
		}
		if u := held(t, f, acctA, prjA); u != (usage{files: 1, bytes: 4}) {
			t.Fatalf("usage = %+v; want the other file only", u)
		}
	})
}

func TestFilesAreInvisibleOutsideTheirAccountAndProject(t *testing.T) {
	eachBackend(t, Quota{MaxFiles: 1, MaxBytes: 1 << 20}, func(t *testing.T, f *fixture) {
		inProject := mustCreate(t, f.repo, acctA, prjA, []byte("project"), Upload{Filename: "p", Purpose: "x"})
		atAccount := mustCreate(t, f.repo, acctA, "", []byte("account"), Upload{Filename: "a", Purpose: "x"})
		for _, c := range []struct {
			name      string
			acct, prj string
			file      *File
		}{
			{"other project", acctA, prjB, inProject},
			{"account level", acctA, "", inProject},
			{"other account", acctB, prjA, inProject},
			{"a project", acctA, prjA, atAccount},
			{"other account's account level", acctB, "", atAccount},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := f.repo.Get(ctx(t), c.acct, c.prj, c.file.ID)
				wantCode(t, err, apierr.NotFound)
				_, _, err = f.repo.Open(ctx(t), c.acct, c.prj, c.file.ID)
				wantCode(t, err, apierr.NotFound)
				_, err = f.repo.Delete(ctx(t), c.acct, c.prj, c.file.ID)
				wantCode(t, err, apierr.NotFound)
				for _, purpose := range []string{"", "x"} {
					list, _, err := f.repo.List(ctx(t), c.acct, c.prj, purpose, 100, "")
					if err != nil || slices.Contains(fileIDs(list), c.file.ID) {
						t.Fatalf("List(%q) = %v, %v", purpose, fileIDs(list), err)
					}
				}
			})
		}
		// Each scope counts its own quota of one file.
		mustCreate(t, f.repo, acctA, prjB, []byte("b"), upload("b"))
		mustCreate(t, f.repo, acctB, prjA, []byte("b"), upload("b"))
		for _, id := range []string{inProject.ID, atAccount.ID} {
			scope := prjA
			if id == atAccount.ID {
				scope = ""
			}
			if _, _, err := f.repo.Open(ctx(t), acctA, scope, id); err != nil {
				t.Fatalf("own scope lost %s: %v", id, err)
			}
		}
	})
}

func TestListIsNewestFirstPagedAndFilteredByPurpose(t *testing.T) {
	eachBackend(t, DefaultQuota, func(t *testing.T, f *fixture) {
		var all, even []string
		for i := range 5 {
			u := upload(fmt.Sprint(i))
			if i%2 == 0 {
				u.Purpose = "even"
			}
			file := mustCreate(t, f.repo, acctA, prjA, []byte{byte(i)}, u)
			all = append([]string{file.ID}, all...)
			if i%2 == 0 {
				even = append([]string{file.ID}, even...)
			}
			f.clock.Advance(time.Second)
		}
		for _, c := range []struct {
			purpose string
			want    []string
		}{{"", all}, {"even", even}, {"odd", nil}} {
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > len(c.want) {
					t.Fatalf("purpose %q: paging does not end", c.purpose)
				}
				list, next, err := f.repo.List(ctx(t), acctA, prjA, c.purpose, 2, cursor)
				if err != nil || len(list) > 2 {
					t.Fatalf("List = %d files, %v", len(list), err)
				}
				got = append(got, fileIDs(list)...)
				if next == "" {
					break
				}
				cursor = next
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("purpose %q: %v; want %v", c.purpose, got, c.want)
			}
		}
		for _, c := range []struct {
			limit   int
			cursor  string
			purpose string
		}{{101, "", ""}, {-1, "", ""}, {10, "%%%", ""}, {10, "", "Bad Purpose"}} {
			_, _, err := f.repo.List(ctx(t), acctA, prjA, c.purpose, c.limit, c.cursor)
			wantCode(t, err, apierr.ValidationFailed)
		}
		if list, _, err := f.repo.List(ctx(t), acctA, prjA, "", 0, paging.Cursor(all[0])); err != nil || !slices.Equal(fileIDs(list), all[1:]) {
			t.Fatalf("List after the newest = %v, %v", fileIDs(list), err)
		}
	})
}

// crashingStore dies (panics) where Create would write its record: the
// object is stored and nothing else, as when a process is killed there.
type crashingStore struct{ store.Store }

func (crashingStore) Transact(context.Context, []store.Op) error { panic("process killed") }

func createAndCrash(t *testing.T, r *Repo, acct, prj string) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatal("the create did not reach its transaction")
		}
	}()
	_, _ = r.Create(ctx(t), acct, prj, strings.NewReader("orphan"), upload("orphan"))
}

func TestSweepDeletesOnlyObjectsWhoseRecordNeverCame(t *testing.T) {
	eachBackend(t, DefaultQuota, func(t *testing.T, f *fixture) {
		live := mustCreate(t, f.repo, acctA, prjA, []byte("live"), upload("live"))
		liveAccount := mustCreate(t, f.repo, acctA, "", []byte("live"), upload("live"))
		crashing := f.withStore(crashingStore{f.st})
		createAndCrash(t, crashing, acctA, prjA)
		createAndCrash(t, crashing, acctB, "")
		if got := objects(t, f.bucket); len(got) != 4 {
			t.Fatalf("objects after the crashes: %v", got)
		}
		if _, err := f.repo.Sweep(ctx(t), MinOrphanAge-time.Second); err == nil {
			t.Fatal("a sweep of objects younger than MinOrphanAge ran")
		}
		if n, err := f.repo.Sweep(ctx(t), MinOrphanAge); err != nil || n != 0 {
			t.Fatalf("sweep of young objects = %d, %v; want 0 (an upload may still be in flight)", n, err)
		}
		f.clock.Advance(2 * MinOrphanAge)
		if n, err := f.repo.Sweep(ctx(t), MinOrphanAge); err != nil || n != 2 {
			t.Fatalf("sweep = %d, %v; want the 2 orphans", n, err)
		}
		if got := objects(t, f.bucket); len(got) != 2 {
			t.Fatalf("objects after the sweep: %v", got)
		}
		for _, file := range []*File{live, liveAccount} {
			if _, _, err := f.repo.Open(ctx(t), acctA, deref(file.ProjectID), file.ID); err != nil {
				t.Fatalf("the sweep took a live file: %v", err)
			}
		}
	})
}

// TestDeferredWritesCommitWithTheResponse runs Create and Delete the way
// the HTTP layer runs an idempotent request: writes collected in a unit and
// committed with the stored response. Before the commit nothing is visible;
// a deletion whose process dies after the commit but before the object
// goes leaves an object that Sweep takes.
func TestDeferredWritesCommitWithTheResponse(t *testing.T) {
	eachBackend(t, DefaultQuota, func(t *testing.T, f *fixture) {
		deferred := f.withStore(idempotency.Deferring(f.st))
		idem := idempotency.New(f.st, nil, f.clock.Now, time.Minute)
		run := func(key string, op func(context.Context)) *idempotency.Unit {
			claim, _, err := idem.Claim(ctx(t), "key_1", key, key)
			if err != nil {
				t.Fatal(err)
			}
			unit := &idempotency.Unit{}
			op(idempotency.WithUnit(ctx(t), unit))
			if err := idem.CompleteUnit(ctx(t), claim, idempotency.Response{Status: 200}, unit); err != nil {
				t.Fatal(err)
			}
			return unit
		}
		var file *File
		run("create-1", func(c context.Context) {
			var err error
			if file, err = deferred.Create(c, acctA, prjA, strings.NewReader("deferred"), upload("d")); err != nil {
				t.Fatal(err)
			}
			_, err = f.repo.Get(ctx(t), acctA, prjA, file.ID)
			wantCode(t, err, apierr.NotFound)
			if u := held(t, f, acctA, prjA); u != (usage{}) {
				t.Fatalf("quota used before the commit: %+v", u)
			}
		})
		if _, body, err := f.repo.Open(ctx(t), acctA, prjA, file.ID); err != nil || string(body) != "deferred" {
			t.Fatalf("after the commit: %q, %v", body, err)
		}
		run("delete-1", func(c context.Context) {
			if _, err := deferred.Delete(c, acctA, prjA, file.ID); err != nil {
				t.Fatal(err)
			}
			if _, _, err := f.repo.Open(ctx(t), acctA, prjA, file.ID); err != nil {
				t.Fatalf("the file went before the commit: %v", err)
			}
		}) // the process dies here: unit.Committed() never runs
		_, err := f.repo.Get(ctx(t), acctA, prjA, file.ID)
		wantCode(t, err, apierr.NotFound)
		if got := objects(t, f.bucket); len(got) != 1 {
			t.Fatalf("objects = %v; want the one the dead deletion left", got)
		}
		f.clock.Advance(2 * MinOrphanAge)
		if n, err := f.repo.Sweep(ctx(t), MinOrphanAge); err != nil || n != 1 {
			t.Fatalf("sweep = %d, %v", n, err)
		}
	})
}

func TestDiscardDeletesOnlyUncommittedObjects(t *testing.T) {
	eachBackend(t, DefaultQuota, func(t *testing.T, f *fixture) {
		kept := mustCreate(t, f.repo, acctA, prjA, []byte("kept"), upload("k"))
		if err := f.repo.Discard(ctx(t), acctA, kept); err == nil {
			t.Fatal("Discard deleted a committed file's bytes")
		}
		deferred := f.withStore(idempotency.Deferring(f.st))
		lost, err := deferred.Create(idempotency.WithUnit(ctx(t), &idempotency.Unit{}), acctA, prjA, strings.NewReader("lost"), upload("l"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.repo.Discard(ctx(t), acctA, lost); err != nil {
			t.Fatal(err)
		}
		if got := objects(t, f.bucket); !slices.Equal(got, []string{objectKey(acctA, prjA, kept.ID)}) {
			t.Fatalf("objects = %v", got)
		}
	})
}

func TestOpenNeverServesBytesThatNoLongerMatchTheirSHA256(t *testing.T) {
	eachBackend(t, DefaultQuota, func(t *testing.T, f *fixture) {
		file := mustCreate(t, f.repo, acctA, prjA, []byte("original"), upload("o"))
		if _, err := f.bucket.Put(ctx(t), objectKey(acctA, prjA, file.ID), strings.NewReader("tampered"), blob.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		_, body, err := f.repo.Open(ctx(t), acctA, prjA, file.ID)
		var ae *apierr.Error
		if err == nil || errors.As(err, &ae) || body != nil {
			t.Fatalf("Open = %q, %v; want an internal error", body, err)
		}
	})
}
