package filesapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"platformapi/shared/groups/files"
	"platformapi/shared/groups/files/filesapi"
	"platformapi/shared/harness/apitest"
)

// upload posts body as a file named name with the given extra headers.
func upload(e *apitest.Env, key string, body []byte, headers map[string]string) *apitest.Resp {
	e.T.Helper()
	h := map[string]string{"Content-Type": "application/octet-stream", "X-File-Name": "data.bin"}
	for k, v := range headers {
		h[k] = v
	}
	return e.Do(apitest.Req{Method: "POST", Path: "/v1/files", Key: key, Idem: apitest.Idem(), Headers: h, Body: body})
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// ids lists the ids of the files key sees (with the extra headers).
func ids(e *apitest.Env, key string, headers map[string]string) []string {
	e.T.Helper()
	r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files", Key: key, Headers: headers}), 200)
	var out []string
	for _, f := range r.Body["data"].([]any) {
		out = append(out, f.(map[string]any)["id"].(string))
	}
	return out
}

// objects counts the objects in the files bucket.
func objects(e *apitest.Env) int {
	e.T.Helper()
	n := 0
	for _, err := range e.Ports.Files.List(context.Background(), "files/") {
		if err != nil {
			e.T.Fatal(err)
		}
		n++
	}
	return n
}

func project(e *apitest.Env, root, name string) string {
	e.T.Helper()
	return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": name}}), 201).Str("id")
}

func TestAnUploadRoundTripsWithItsChecksum(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		body := []byte("hello, files\n")
		c := e.Must(upload(e, root, body, map[string]string{"Content-Type": "text/plain; charset=utf-8", "X-File-Name": "notes.txt",
			"X-Content-Sha256": strings.ToUpper(sum(body)), "X-Service-File-Purpose": "notes"}), 201)
		id := c.Str("id")
		if !strings.HasPrefix(id, "file_") || c.Header.Get("Location") != "/v1/files/"+id || c.Header.Get("X-Content-Sha256") != sum(body) ||
			c.Str("sha256") != sum(body) || c.Body["sizeBytes"] != float64(len(body)) || c.Str("filename") != "notes.txt" ||
			c.Str("contentType") != "text/plain; charset=utf-8" || c.Str("purpose") != "notes" || c.Body["projectId"] != nil || c.Str("createdAt") == "" {
			t.Fatalf("created %v %s", c.Header, c.Raw)
		}
		if _, ok := c.Body["status"]; ok {
			t.Fatalf("a new record carries a status: %s", c.Raw)
		}
		if got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + id, Key: root}), 200); !bytes.Equal(got.Raw, c.Raw) {
			t.Fatalf("read %s, created %s", got.Raw, c.Raw)
		}
		if got := ids(e, root, nil); len(got) != 1 || got[0] != id {
			t.Fatalf("list = %v", got)
		}
		if got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files?purpose=notes", Key: root}), 200); len(got.Body["data"].([]any)) != 1 {
			t.Fatalf("?purpose=notes = %s", got.Raw)
		}
		if got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files?purpose=other", Key: root}), 200); len(got.Body["data"].([]any)) != 0 {
			t.Fatalf("?purpose=other = %s", got.Raw)
		}
		d := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + id + "/content", Key: root}), 200)
		want := map[string]string{
			"Content-Type": "text/plain; charset=utf-8", "X-Content-Sha256": sum(body), "Content-Length": "13",
			"Content-Disposition":    `attachment; filename="notes.txt"; filename*=UTF-8''notes.txt`,
			"X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store", "Accept-Ranges": "bytes",
		}
		for h, v := range want {
			if got := d.Header.Get(h); got != v {
				t.Errorf("%s = %q, want %q", h, got, v)
			}
		}
		if !bytes.Equal(d.Raw, body) {
			t.Fatalf("downloaded %q", d.Raw)
		}
	})
}

// A body whose SHA-256 is not the header's stores no object, no record and
// uses no quota: the whole quota is still there for the next upload.
func TestAChecksumMismatchLeavesNothingBehind(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		good := []byte("0123456789")
		e.Must(upload(e, root, []byte("01234"), map[string]string{"X-Content-Sha256": sum(good)}), 400, "checksum_mismatch")
		if got := ids(e, root, nil); len(got) != 0 {
			t.Fatalf("list after a mismatch = %v", got)
		}
		if n := objects(e); n != 0 {
			t.Fatalf("%d objects after a mismatch", n)
		}
		e.Must(upload(e, root, good, map[string]string{"X-Content-Sha256": sum(good)}), 201)
		e.Must(upload(e, root, []byte("x"), nil), 409, "quota_exceeded")
	}, apitest.Options{Env: map[string]string{filesapi.EnvQuotaFiles: "1", filesapi.EnvQuotaBytes: "10"}})
}

// Bodies of 1 byte to 4 MiB are files; an empty one is 400 and one byte
// more than 4 MiB is 413, neither storing anything.
func TestABodyOutsideOneByteToFourMiBIsRefusedAndStoresNothing(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		big := bytes.Repeat([]byte{0xa5}, files.MaxSize+1)
		e.Must(upload(e, root, big, nil), 413, "payload_too_large")
		e.Must(upload(e, root, []byte{}, nil), 400, "validation_failed")
		if got, n := ids(e, root, nil), objects(e); len(got) != 0 || n != 0 {
			t.Fatalf("refused uploads left %v and %d objects", got, n)
		}
		full := e.Must(upload(e, root, big[:files.MaxSize], map[string]string{"X-Content-Sha256": sum(big[:files.MaxSize])}), 201)
		one := e.Must(upload(e, root, []byte{7}, nil), 201)
		if full.Body["sizeBytes"] != float64(files.MaxSize) || one.Body["sizeBytes"] != float64(1) {
			t.Fatalf("sizes %v %v", full.Body["sizeBytes"], one.Body["sizeBytes"])
		}
		d := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + full.Str("id") + "/content", Key: root}), 200)
		if !bytes.Equal(d.Raw, big[:files.MaxSize]) {
			t.Fatalf("downloaded %d bytes, not the 4 MiB uploaded", len(d.Raw))
		}
	})
}

func TestTheFileNameHeaderIsASCIIOrRFC8187(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	for _, tc := range []struct {
		name, header, filename, disposition string
	}{
		{"PlainASCII", "Q3's report.pdf", "Q3's report.pdf", `attachment; filename="Q3's report.pdf"; filename*=UTF-8''Q3%27s%20report.pdf`},
		{"RFC8187", "UTF-8''r%C3%A9sum%C3%A9 %E2%82%AC.pdf", "", ""},
		{"RFC8187Encoded", "UTF-8''r%C3%A9sum%C3%A9%20%E2%82%AC.pdf", "résumé €.pdf", `attachment; filename="r_sum_ _.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%E2%82%AC.pdf`},
		{"Slash", "a/b.txt", "", ""},
		{"Backslash", `a\b.txt`, "", ""},
		{"EncodedSlash", "UTF-8''a%2Fb.txt", "", ""},
		{"EncodedControl", "UTF-8''a%0Ab.txt", "", ""},
		{"Latin1", "ISO-8859-1''r%E9sum%E9.pdf", "", ""},
		{"TooLong", strings.Repeat("a", 256), "", ""},
		{"RightToLeftOverride", "UTF-8''evil%E2%80%AEfdp.exe", "", ""},
		{"FirstStrongIsolate", "UTF-8''a%E2%81%A8b.txt", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := upload(e, root, []byte("x"), map[string]string{"X-File-Name": tc.header})
			if tc.filename == "" {
				e.Must(r, 400, "validation_failed")
				if strings.Contains(tc.header, "%E2%80%AE") && !strings.Contains(string(r.Raw), "bidirectional control character U+202E") {
					t.Fatalf("the refusal does not name the rule: %s", r.Raw)
				}
				return
			}
			e.Must(r, 201)
			if r.Str("filename") != tc.filename {
				t.Fatalf("filename %q", r.Str("filename"))
			}
			d := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + r.Str("id") + "/content", Key: root}), 200)
			if got := d.Header.Get("Content-Disposition"); got != tc.disposition {
				t.Fatalf("Content-Disposition %q, want %q", got, tc.disposition)
			}
		})
	}
	h := map[string]string{"Content-Type": "application/octet-stream"}
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/files", Key: root, Idem: apitest.Idem(), Headers: h, Body: []byte("x")}), 400, "validation_failed")
	e.Must(upload(e, root, []byte("x"), map[string]string{"X-Service-File-Purpose": "Not A Purpose"}), 400, "validation_failed")
	e.Must(upload(e, root, []byte("x"), map[string]string{"X-Content-Sha256": "abc"}), 400, "validation_failed")
	if got := ids(e, root, nil); len(got) != 2 {
		t.Fatalf("%d files stored, want the 2 valid ones", len(got))
	}
}

func TestDownloadsAnswerRanges(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		body := []byte("0123456789")
		id := e.Must(upload(e, root, body, nil), 201).Str("id")
		path := "/v1/files/" + id + "/content"
		for _, tc := range []struct {
			rng, contentRange, body string
			status                  int
		}{
			{"bytes=2-4", "bytes 2-4/10", "234", 206},
			{"bytes=-3", "bytes 7-9/10", "789", 206},
			{"bytes=8-", "bytes 8-9/10", "89", 206},
			{"bytes=10-", "bytes */10", "", 416},
			{"bytes=20-30", "bytes */10", "", 416},
		} {
			r := e.Do(apitest.Req{Method: "GET", Path: path, Key: root, Headers: map[string]string{"Range": tc.rng}})
			if r.Status != tc.status || r.Header.Get("Content-Range") != tc.contentRange || tc.status == 206 && string(r.Raw) != tc.body {
				t.Errorf("Range %s: %d %q %q", tc.rng, r.Status, r.Header.Get("Content-Range"), r.Raw)
			}
			if tc.status == 206 && r.Header.Get("X-Content-Sha256") != sum(body) {
				t.Errorf("Range %s: X-Content-Sha256 %q is not the whole file's", tc.rng, r.Header.Get("X-Content-Sha256"))
			}
		}
		etag := e.Must(e.Do(apitest.Req{Method: "GET", Path: path, Key: root}), 200).Header.Get("ETag")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: path, Key: root, Headers: map[string]string{"If-None-Match": etag}}), 304)
	})
}

// A file belongs to its account and project: a key bound to another
// project, the account level, another project selected by header and
// another account all get 404 on every operation, and list nothing.
func TestAnotherScopesFileIsNotFoundForEveryOperation(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		a, b := project(e, root, "a"), project(e, root, "b")
		keyA, _ := e.Child(root, map[string]any{"projectId": a})
		keyB, _ := e.Child(root, map[string]any{"projectId": b})
		other, _ := e.RootKey(1, nil)
		id := e.Must(upload(e, keyA, []byte("secret plans"), nil), 201).Str("id")
		accountFile := e.Must(upload(e, root, []byte("account level"), nil), 201).Str("id")

		for _, c := range []struct {
			name, key string
			headers   map[string]string
		}{
			{"KeyOfAnotherProject", keyB, nil},
			{"AccountLevelKey", root, nil},
			{"AccountKeySelectingAnotherProject", root, map[string]string{"X-Service-Project": b}},
			{"AnotherAccount", other, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				for _, r := range []apitest.Req{
					{Method: "GET", Path: "/v1/files/" + id},
					{Method: "GET", Path: "/v1/files/" + id + "/content"},
					{Method: "DELETE", Path: "/v1/files/" + id, Idem: apitest.Idem()},
				} {
					r.Key, r.Headers = c.key, c.headers
					e.Must(e.Do(r), 404, "not_found")
				}
				if got := ids(e, c.key, c.headers); len(got) != 0 && (len(got) != 1 || got[0] != accountFile) {
					t.Fatalf("list = %v", got)
				}
			})
		}
		// The project's file is there for the project's scope, and the
		// account-level file is not.
		for _, c := range []struct {
			key     string
			headers map[string]string
		}{{keyA, nil}, {root, map[string]string{"X-Service-Project": a}}} {
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + id, Key: c.key, Headers: c.headers}), 200)
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + accountFile, Key: c.key, Headers: c.headers}), 404, "not_found")
			if got := ids(e, c.key, c.headers); len(got) != 1 || got[0] != id {
				t.Fatalf("the project's list = %v", got)
			}
		}
		if got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + id, Key: keyA}), 200); got.Str("projectId") != a {
			t.Fatalf("projectId %s", got.Raw)
		}
	})
}

// A retried upload with the same Idempotency-Key and body answers the
// stored response: the same record, one file, one quota use.
func TestAReplayedUploadAnswersTheSameRecord(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		req := apitest.Req{Method: "POST", Path: "/v1/files", Key: root, Idem: apitest.Idem(), Body: []byte("once"),
			Headers: map[string]string{"Content-Type": "text/plain", "X-File-Name": "once.txt"}}
		first := e.Must(e.Do(req), 201)
		again := e.Must(e.Do(req), 201)
		if !bytes.Equal(first.Raw, again.Raw) || again.Header.Get("Idempotent-Replayed") != "true" ||
			again.Header.Get("Location") != first.Header.Get("Location") || again.Header.Get("X-Content-Sha256") != sum([]byte("once")) {
			t.Fatalf("first %v %s\nreplay %v %s", first.Header, first.Raw, again.Header, again.Raw)
		}
		if got, n := ids(e, root, nil), objects(e); len(got) != 1 || n != 1 {
			t.Fatalf("%v and %d objects after a replay", got, n)
		}
		req.Body = []byte("twice")
		e.Must(e.Do(req), 409, "idempotency_key_reused")
		// One file used: the second of a quota of two still fits.
		e.Must(upload(e, root, []byte("2"), nil), 201)
		e.Must(upload(e, root, []byte("3"), nil), 409, "quota_exceeded")
	}, apitest.Options{Env: map[string]string{filesapi.EnvQuotaFiles: "2", filesapi.EnvQuotaBytes: "1048576"}})
}

// The name, checksum, purpose and media type are inputs
// of an upload as much as its bytes: a retry that changes one of them with
// the same Idempotency-Key is 409, never the first upload's record.
func TestAnUploadRetriedWithOtherHeadersIsAReusedKey(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		base := map[string]string{"Content-Type": "text/plain", "X-File-Name": "once.txt", "X-Content-Sha256": sum([]byte("once")), "X-Service-File-Purpose": "notes"}
		idem := apitest.Idem()
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/files", Key: root, Idem: idem, Body: []byte("once"), Headers: base}), 201)
		for _, change := range []struct{ header, value string }{
			{"X-File-Name", "other.txt"},
			{"X-Content-Sha256", ""},
			{"X-Service-File-Purpose", "invoices"},
			{"X-Service-File-Purpose", ""},
			{"Content-Type", "text/html"},
		} {
			h := maps.Clone(base)
			if change.value == "" {
				delete(h, change.header)
			} else {
				h[change.header] = change.value
			}
			if r := e.Do(apitest.Req{Method: "POST", Path: "/v1/files", Key: root, Idem: idem, Body: []byte("once"), Headers: h}); r.Status != 409 || r.Code() != "idempotency_key_reused" {
				t.Errorf("%s %q: %d %s, want 409 idempotency_key_reused", change.header, change.value, r.Status, r.Raw)
			}
		}
		again := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/files", Key: root, Idem: idem, Body: []byte("once"), Headers: base}), 201)
		if again.Header.Get("Idempotent-Replayed") != "true" || len(ids(e, root, nil)) != 1 {
			t.Fatalf("the unchanged retry: %v %s", again.Header, again.Raw)
		}
	})
}

// The quota counts files and bytes per project; a deletion gives both back.
func TestTheQuotaIsPerProjectAndFreedByDeletion(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		a := project(e, root, "a")
		inA := map[string]string{"X-Service-Project": a}
		first := e.Must(upload(e, root, []byte("123456"), inA), 201).Str("id")
		e.Must(upload(e, root, []byte("123456"), inA), 409, "quota_exceeded") // 12 bytes > 10
		e.Must(upload(e, root, []byte("1234"), inA), 201)
		e.Must(upload(e, root, []byte("1"), inA), 409, "quota_exceeded") // 10 bytes held
		e.Must(upload(e, root, []byte("123456"), nil), 201)              // the account level has its own
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/files/" + first, Key: root, Idem: apitest.Idem(), Headers: inA}), 200)
		e.Must(upload(e, root, []byte("123456"), inA), 201)
	}, apitest.Options{Env: map[string]string{filesapi.EnvQuotaFiles: "3", filesapi.EnvQuotaBytes: "10"}})
}

func TestADeletedFileIsGone(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		c := e.Must(upload(e, root, []byte("short-lived"), map[string]string{"X-Service-File-Purpose": "tmp"}), 201)
		id := c.Str("id")
		d := e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/files/" + id, Key: root, Idem: apitest.Idem()}), 200)
		if d.Str("status") != files.StatusDeleted || d.Str("id") != id || d.Str("sha256") != c.Str("sha256") {
			t.Fatalf("deleted %s", d.Raw)
		}
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + id, Key: root}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files/" + id + "/content", Key: root}), 404, "not_found")
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/files/" + id, Key: root, Idem: apitest.Idem()}), 404, "not_found")
		if got, n := ids(e, root, map[string]string{}), objects(e); len(got) != 0 || n != 0 {
			t.Fatalf("%v and %d objects after deletion", got, n)
		}
		if got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/files?purpose=tmp", Key: root}), 200); len(got.Body["data"].([]any)) != 0 {
			t.Fatalf("?purpose=tmp after deletion = %s", got.Raw)
		}
	})
}

// Uploads and deletions are announced to the scope's webhooks.
func TestFileEventsReachTheWebhooks(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"url": "https://93.184.216.34/in", "events": []string{"file.created", "file.deleted"}}}), 201)
		id := e.Must(upload(e, root, []byte("announced"), nil), 201).Str("id")
		e.Must(upload(e, root, []byte("refused"), map[string]string{"X-Content-Sha256": sum([]byte("other"))}), 400, "checksum_mismatch")
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/files/" + id, Key: root, Idem: apitest.Idem()}), 200)
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhook-deliveries", Key: root}), 200)
		got := map[string]int{}
		for _, d := range r.Body["data"].([]any) {
			d := d.(map[string]any)
			got[d["event"].(string)]++
			if p, _ := d["payload"].(map[string]any); !strings.Contains(string(mustJSON(t, p)), id) {
				t.Errorf("%s payload does not name the file: %v", d["event"], p)
			}
		}
		if got["file.created"] != 1 || got["file.deleted"] != 1 || len(got) != 2 {
			t.Fatalf("deliveries by event = %v", got)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
