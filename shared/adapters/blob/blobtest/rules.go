package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/blob"
)

var putRules = []rule{
	{"PutThenGetRoundTripsBytesAndInfo", func(t *testing.T, h Harness, b blob.Bucket) {
		data := payload(1000, 1)
		before := time.Now().Add(-time.Minute)
		info := mustPut(t, b, "dir/sub/file.bin", data, blob.PutOptions{
			ContentType: "application/x-test", Metadata: map[string]string{"owner": "acct_1", "label": "a b"},
		})
		for _, got := range []blob.Info{info, head(t, b, "dir/sub/file.bin")} {
			if got.Key != "dir/sub/file.bin" || got.Size != 1000 || got.SHA256 != hexSHA(data) ||
				got.ContentType != "application/x-test" || got.Metadata["owner"] != "acct_1" ||
				got.Metadata["label"] != "a b" || len(got.Metadata) != 2 || got.Modified.Before(before) {
				t.Fatalf("info = %+v", got)
			}
		}
		wantContent(t, b, "dir/sub/file.bin", data)
	}},
	{"EmptyObjectIsAnObject", func(t *testing.T, h Harness, b blob.Bucket) {
		mustPut(t, b, "empty", nil, blob.PutOptions{})
		wantContent(t, b, "empty", nil)
	}},
	{"ContentTypeDefaultsToOctetStream", func(t *testing.T, h Harness, b blob.Bucket) {
		if info := mustPut(t, b, "k", []byte("x"), blob.PutOptions{}); info.ContentType != "application/octet-stream" {
			t.Fatalf("content type = %q", info.ContentType)
		}
	}},
	{"PutReplacesAnExistingObject", func(t *testing.T, h Harness, b blob.Bucket) {
		mustPut(t, b, "k", []byte("old"), blob.PutOptions{Metadata: map[string]string{"v": "1"}})
		mustPut(t, b, "k", []byte("new!"), blob.PutOptions{})
		wantContent(t, b, "k", []byte("new!"))
		if md := head(t, b, "k").Metadata; len(md) != 0 {
			t.Fatalf("old metadata survived: %v", md)
		}
	}},
	{"MatchingExpectedSHA256IsStored", func(t *testing.T, h Harness, b blob.Bucket) {
		data := payload(5000, 2)
		mustPut(t, b, "k", data, blob.PutOptions{ExpectedSHA256: hexSHA(data)})
		wantContent(t, b, "k", data)
	}},
	{"MismatchedSHA256StoresNothing", func(t *testing.T, h Harness, b blob.Bucket) {
		for _, size := range []int{10, h.LargeSize} {
			_, err := b.Put(ctx(t), "k", bytes.NewReader(payload(size, 3)), blob.PutOptions{ExpectedSHA256: hexSHA([]byte("other"))})
			if !errors.Is(err, blob.ErrChecksumMismatch) {
				t.Fatalf("size %d: err = %v; want ErrChecksumMismatch", size, err)
			}
			wantAbsent(t, b, "k")
		}
	}},
	{"IfNotExistsWithAMismatchedSHA256ClaimsNothing", func(t *testing.T, h Harness, b blob.Bucket) {
		data := payload(h.LargeSize, 9)
		for _, size := range []int{10, h.LargeSize} {
			_, err := b.Put(ctx(t), "k", bytes.NewReader(payload(size, 3)), blob.PutOptions{ExpectedSHA256: hexSHA(data), IfNotExists: true})
			if !errors.Is(err, blob.ErrChecksumMismatch) {
				t.Fatalf("size %d: err = %v; want ErrChecksumMismatch", size, err)
			}
			wantAbsent(t, b, "k")
		}
		mustPut(t, b, "k", data, blob.PutOptions{ExpectedSHA256: hexSHA(data), IfNotExists: true})
		wantContent(t, b, "k", data)
	}},
	{"ExpectedSHA256IgnoresHexCase", func(t *testing.T, h Harness, b blob.Bucket) {
		data := payload(100, 10)
		info := mustPut(t, b, "k", data, blob.PutOptions{ExpectedSHA256: strings.ToUpper(hexSHA(data))})
		if info.SHA256 != hexSHA(data) {
			t.Fatalf("SHA256 = %q; want lowercase %q", info.SHA256, hexSHA(data))
		}
	}},
	{"MismatchedSHA256KeepsThePreviousObject", func(t *testing.T, h Harness, b blob.Bucket) {
		mustPut(t, b, "k", []byte("keep me"), blob.PutOptions{})
		_, err := b.Put(ctx(t), "k", strings.NewReader("evil"), blob.PutOptions{ExpectedSHA256: hexSHA([]byte("good"))})
		if !errors.Is(err, blob.ErrChecksumMismatch) {
			t.Fatalf("err = %v; want ErrChecksumMismatch", err)
		}
		wantContent(t, b, "k", []byte("keep me"))
	}},
	{"FailedReaderStoresNothing", func(t *testing.T, h Harness, b blob.Bucket) {
		for _, size := range []int{10, h.LargeSize} {
			_, err := b.Put(ctx(t), "k", &failingReader{bytes.NewReader(payload(size, 4))}, blob.PutOptions{})
			if !errors.Is(err, errClientGone) {
				t.Fatalf("size %d: err = %v; want the reader's error", size, err)
			}
			wantAbsent(t, b, "k")
		}
	}},
	{"LargeObjectRoundTrips", func(t *testing.T, h Harness, b blob.Bucket) {
		data := payload(h.LargeSize, 5)
		info := mustPut(t, b, "large", data, blob.PutOptions{ExpectedSHA256: hexSHA(data), ContentType: "video/x-test",
			Metadata: map[string]string{"part": "all"}})
		if info.SHA256 != hexSHA(data) || info.Size != int64(len(data)) {
			t.Fatalf("info = %+v", info)
		}
		wantContent(t, b, "large", data)
		if got := head(t, b, "large"); got.ContentType != "video/x-test" || got.Metadata["part"] != "all" {
			t.Fatalf("head = %+v", got)
		}
	}},
	{"PutHonoursACancelledContext", func(t *testing.T, h Harness, b blob.Bucket) {
		c, cancel := context.WithCancel(ctx(t))
		cancel()
		if _, err := b.Put(c, "k", strings.NewReader("x"), blob.PutOptions{}); err == nil {
			t.Fatal("put with a cancelled context succeeded")
		}
		wantAbsent(t, b, "k")
	}},
}

var readRules = []rule{
	{"AbsentObjectIsNotFound", func(t *testing.T, h Harness, b blob.Bucket) {
		wantAbsent(t, b, "nothing/here")
	}},
	{"DeleteRemovesTheObject", func(t *testing.T, h Harness, b blob.Bucket) {
		mustPut(t, b, "k", []byte("x"), blob.PutOptions{})
		if err := b.Delete(ctx(t), "k"); err != nil {
			t.Fatal(err)
		}
		wantAbsent(t, b, "k")
	}},
	{"DeleteOfAbsentObjectSucceeds", func(t *testing.T, h Harness, b blob.Bucket) {
		if err := b.Delete(ctx(t), "never"); err != nil {
			t.Fatal(err)
		}
	}},
	{"KeysAreOpaqueStrings", func(t *testing.T, h Harness, b blob.Bucket) {
		keys := []string{"a", "a/b", "a/b/c", "with space", "ünïcödé", "dots..in..name", "trailing/"}
		for i, k := range keys {
			mustPut(t, b, k, []byte{byte(i)}, blob.PutOptions{})
		}
		for i, k := range keys {
			wantContent(t, b, k, []byte{byte(i)})
		}
	}},
	{"EmptyKeyIsRefused", func(t *testing.T, h Harness, b blob.Bucket) {
		if _, err := b.Put(ctx(t), "", strings.NewReader("x"), blob.PutOptions{}); err == nil {
			t.Fatal("put with an empty key succeeded")
		}
	}},
}

var conditionRules = []rule{
	{"IfNotExistsCreatesAbsentObject", func(t *testing.T, h Harness, b blob.Bucket) {
		mustPut(t, b, "k", []byte("x"), blob.PutOptions{IfNotExists: true})
		wantContent(t, b, "k", []byte("x"))
	}},
	{"IfNotExistsRefusesExistingObject", func(t *testing.T, h Harness, b blob.Bucket) {
		mustPut(t, b, "k", []byte("first"), blob.PutOptions{})
		for _, size := range []int{6, h.LargeSize} {
			_, err := b.Put(ctx(t), "k", bytes.NewReader(payload(size, 6)), blob.PutOptions{IfNotExists: true})
			if !errors.Is(err, blob.ErrExists) {
				t.Fatalf("size %d: err = %v; want ErrExists", size, err)
			}
		}
		wantContent(t, b, "k", []byte("first"))
	}},
	{"ConcurrentIfNotExistsPutsHaveOneWinner", func(t *testing.T, h Harness, b blob.Bucket) {
		const n = 8
		errs := make(chan error, n)
		for i := range n {
			go func() {
				_, err := b.Put(ctx(t), "claim", bytes.NewReader(payload(100, byte(i))), blob.PutOptions{IfNotExists: true})
				errs <- err
			}()
		}
		wins := 0
		for range n {
			switch err := <-errs; {
			case err == nil:
				wins++
			case !errors.Is(err, blob.ErrExists):
				t.Fatalf("err = %v", err)
			}
		}
		if wins != 1 {
			t.Fatalf("%d winners; want 1", wins)
		}
	}},
}

var listRules = []rule{
	{"ListYieldsTheObjectsUnderThePrefixInKeyOrder", func(t *testing.T, h Harness, b blob.Bucket) {
		before := time.Now().Add(-time.Minute)
		for i, k := range []string{"b/2", "a/1", "b/1", "b10", "c", "b/ü"} {
			mustPut(t, b, k, payload(i+1, byte(i)), blob.PutOptions{})
		}
		entries := list(t, b, "b/")
		if got := keys(entries); !slices.Equal(got, []string{"b/1", "b/2", "b/ü"}) {
			t.Fatalf("List(b/) = %v", got)
		}
		for _, e := range entries {
			if want := map[string]int64{"b/1": 3, "b/2": 1, "b/ü": 6}[e.Key]; e.Size != want || e.Modified.Before(before) {
				t.Fatalf("entry %+v; want size %d, modified after %v", e, want, before)
			}
		}
		if got := keys(list(t, b, "")); !slices.Equal(got, []string{"a/1", "b/1", "b/2", "b/ü", "b10", "c"}) {
			t.Fatalf("List() = %v", got)
		}
		if got := list(t, b, "nothing/"); len(got) != 0 {
			t.Fatalf("List(nothing/) = %v", got)
		}
	}},
	{"ListWalksEveryPage", func(t *testing.T, h Harness, b blob.Bucket) {
		var want []string
		for i := range h.ManyObjects {
			k := fmt.Sprintf("many/%03d", i)
			want = append(want, k)
			mustPut(t, b, k, []byte{byte(i)}, blob.PutOptions{})
		}
		if got := keys(list(t, b, "many/")); !slices.Equal(got, want) {
			t.Fatalf("List = %v; want %v", got, want)
		}
	}},
	{"ListSeesNeitherDeletedNorRefusedObjects", func(t *testing.T, h Harness, b blob.Bucket) {
		mustPut(t, b, "gone", []byte("x"), blob.PutOptions{})
		if err := b.Delete(ctx(t), "gone"); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{10, h.LargeSize} {
			_, err := b.Put(ctx(t), "refused", bytes.NewReader(payload(size, 8)), blob.PutOptions{ExpectedSHA256: hexSHA(nil)})
			if !errors.Is(err, blob.ErrChecksumMismatch) {
				t.Fatalf("size %d: err = %v; want ErrChecksumMismatch", size, err)
			}
		}
		if got := list(t, b, ""); len(got) != 0 {
			t.Fatalf("List = %v; want nothing", got)
		}
	}},
	{"ListStopsWhenTheConsumerStops", func(t *testing.T, h Harness, b blob.Bucket) {
		for i := range 3 {
			mustPut(t, b, fmt.Sprintf("k%d", i), []byte{1}, blob.PutOptions{})
		}
		n := 0
		for _, err := range b.List(ctx(t), "") {
			if err != nil {
				t.Fatal(err)
			}
			n++
			break
		}
		if n != 1 {
			t.Fatalf("%d entries before the break", n)
		}
	}},
}

var presignRules = []rule{
	{"PresignGetMatchesTheDeclaredCapability", func(t *testing.T, h Harness, b blob.Bucket) {
		data := payload(300, 7)
		mustPut(t, b, "dl/file", data, blob.PutOptions{})
		url, err := b.PresignGet(ctx(t), "dl/file", time.Minute)
		if !h.CanPresign {
			if !errors.Is(err, blob.ErrNotSupported) {
				t.Fatalf("PresignGet = %q, %v; want ErrNotSupported", url, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, data) {
			t.Fatalf("GET presigned URL: %s, %d bytes, %v", resp.Status, len(got), err)
		}
	}},
}

func list(t *testing.T, b blob.Bucket, prefix string) []blob.Entry {
	t.Helper()
	var out []blob.Entry
	for e, err := range b.List(ctx(t), prefix) {
		if err != nil {
			t.Fatalf("list %q: %v", prefix, err)
		}
		out = append(out, e)
	}
	return out
}

func keys(entries []blob.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Key
	}
	return out
}

func head(t *testing.T, b blob.Bucket, key string) blob.Info {
	t.Helper()
	info, err := b.Head(ctx(t), key)
	if err != nil {
		t.Fatalf("head %s: %v", key, err)
	}
	return info
}
