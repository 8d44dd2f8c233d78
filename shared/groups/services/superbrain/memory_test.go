package superbrain

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
)

func TestWriteStoresTextAndMetadataAsSent(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		text := "Käse 🧀 mag ich, \"sehr\"\nzweite Zeile"
		in, _ := json.Marshal(map[string]any{"text": text, "metadata": map[string]string{"lang": "de", "empty": ""}})
		w := call[writeOutput](h, alice, OpWrite, string(in))
		if !ids.Valid("mem", w.ID) || !w.CreatedAt.Equal(h.clock.Now().Truncate(time.Millisecond)) {
			t.Fatalf("write output %+v", w)
		}
		h.clock.Advance(time.Millisecond)
		bare := call[writeOutput](h, alice, OpWrite, `{"text":"no metadata"}`)
		page := call[listOutput](h, alice, OpList, `{}`)
		if len(page.Data) != 2 || page.NextCursor != nil {
			t.Fatalf("list %+v", page)
		}
		got, first := page.Data[1], page.Data[0]
		if got.ID != w.ID || got.Text != text || got.Metadata["lang"] != "de" || len(got.Metadata) != 2 || !got.CreatedAt.Equal(w.CreatedAt) {
			t.Errorf("stored %+v", got)
		}
		if first.ID != bare.ID || first.Metadata == nil || len(first.Metadata) != 0 {
			t.Errorf("a memory without metadata must list metadata {}: %+v", first)
		}
	})
}

func TestListPagesNewestFirst(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		var written []string
		for i := range 5 {
			written = append(written, h.write(alice, fmt.Sprintf("memory %d", i)))
		}
		slices.Reverse(written)
		var got []string
		cursor, pages := "", 0
		for {
			in, _ := json.Marshal(map[string]any{"limit": 2, "cursor": cursor})
			page := call[listOutput](h, alice, OpList, string(in))
			pages++
			for _, m := range page.Data {
				got = append(got, m.ID)
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		if !slices.Equal(got, written) || pages != 3 {
			t.Fatalf("pages %d, order %v, want %v", pages, got, written)
		}
		if def := call[listOutput](h, alice, OpList, `null`); len(def.Data) != 5 {
			t.Fatalf("default limit listed %d", len(def.Data))
		}
	})
}

func TestDeleteRemovesOnceThenNotFound(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		keep, gone := h.write(alice, "keep me"), h.write(alice, "forget me")
		out := call[deleteOutput](h, alice, OpDelete, `{"memoryId":"`+gone+`"}`)
		if out.ID != gone || !out.Deleted {
			t.Fatalf("delete output %+v", out)
		}
		_, err := h.invoke(alice, OpDelete, `{"memoryId":"`+gone+`"}`)
		wantAPIError(t, err, apierr.NotFound)
		_, err = h.invoke(alice, OpDelete, `{"memoryId":"`+ids.New("mem", time.Now())+`"}`)
		wantAPIError(t, err, apierr.NotFound)
		if got := h.listAll(alice); !slices.Equal(got, []string{keep}) {
			t.Fatalf("left %v", got)
		}
		if hits := h.search(alice, "forget", 10); len(hits) != 0 {
			t.Fatalf("a deleted memory is still found: %v", hits)
		}
	})
}

// An input with case-variant keys is refused, in either
// order, so an approval bound to its canonical form can never delete the
// record the case-insensitive decoder would have picked.
func TestACaseVariantKeyCannotSelectAnotherRecord(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		a, b := h.write(alice, "approved for deletion"), h.write(alice, "must survive")
		for _, in := range []string{
			`{"MemoryId":"` + b + `","memoryId":"` + a + `"}`,
			`{"memoryId":"` + a + `","MemoryId":"` + b + `"}`,
			`{"memoryId":"` + a + `","memoryId":"` + b + `"}`,
		} {
			_, err := h.invoke(alice, OpDelete, in)
			wantAPIError(t, err, apierr.ValidationFailed)
		}
		if got := h.listAll(alice); len(got) != 2 || !slices.Contains(got, a) || !slices.Contains(got, b) {
			t.Fatalf("memories left: %v, want both", got)
		}
	})
}

func (h *harness) countKey(w who) store.Key {
	h.t.Helper()
	sc, err := scopeOf(requestOf(w))
	if err != nil {
		h.t.Fatal(err)
	}
	return sc.countKey()
}

// fillTo sets the scope's counts as if it were that full, so the bounds
// are tested without writing thousands of memories.
func (h *harness) fillTo(w who, count, bytes int64) {
	h.t.Helper()
	it := store.NewItem(h.countKey(w))
	it[attrCount], it[attrBytes] = count, bytes
	if err := h.st.Put(context.Background(), it); err != nil {
		h.t.Fatal(err)
	}
}

func TestScopeHoldsAtMostMaxMemoriesEvenUnderConcurrentWrites(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		h.fillTo(alice, MaxMemoriesPerScope-3, 0)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, full := 0, 0
		for i := range 8 {
			wg.Go(func() {
				_, err := h.invoke(alice, OpWrite, fmt.Sprintf(`{"text":"note %d"}`, i))
				mu.Lock()
				defer mu.Unlock()
				switch ae, _ := err.(*apierr.Error); {
				case err == nil:
					ok++
				case ae != nil && ae.Code == apierr.Conflict:
					full++
				default:
					t.Errorf("write: %v", err)
				}
			})
		}
		wg.Wait()
		if ok != 3 || full != 5 {
			t.Fatalf("%d writes succeeded and %d were refused, want 3 and 5", ok, full)
		}
		// Deleting frees a place.
		stored := h.listAll(alice)
		call[deleteOutput](h, alice, OpDelete, `{"memoryId":"`+stored[0]+`"}`)
		h.write(alice, "fits again")
		_, err := h.invoke(alice, OpWrite, `{"text":"one too many"}`)
		wantAPIError(t, err, apierr.Conflict)
		// The bound is per scope.
		h.write(who{account: "acct_bob"}, "bob has room")
	})
}

func TestScopeHoldsAtMostMaxScopeBytesOfTextAndMetadata(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		h.fillTo(alice, 0, MaxScopeBytes-100)
		// 80 bytes of text and "{}" of metadata: 82, leaving 18.
		h.write(alice, strings.Repeat("x", 80))
		_, err := h.invoke(alice, OpWrite, `{"text":"`+strings.Repeat("x", 17)+`"}`)
		wantAPIError(t, err, apierr.Conflict)
		_, err = h.invoke(alice, OpWrite, `{"text":"x","metadata":{"k":"1234567890"}}`) // 1 + 18: one byte over
		wantAPIError(t, err, apierr.Conflict)
		h.write(alice, strings.Repeat("é", 8)) // 16 bytes + 2: exactly full
	})
}

func TestScopeCountsStayExactThroughWritesAndRacingDeletes(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		var written []string
		for i := range 6 {
			h.clock.Advance(time.Millisecond)
			in := fmt.Sprintf(`{"text":"memory ü %d","metadata":{"n":"%d"}}`, i, i*1000)
			written = append(written, call[writeOutput](h, alice, OpWrite, in).ID)
		}
		// Each of three memories is deleted by two callers at once.
		var wg sync.WaitGroup
		for _, id := range written[:3] {
			for range 2 {
				wg.Go(func() { h.invoke(alice, OpDelete, `{"memoryId":"`+id+`"}`) })
			}
		}
		wg.Wait()
		page, err := h.st.Query(context.Background(), store.Query{PK: h.countKey(alice).PK, Prefix: memoryPrefix})
		if err != nil {
			t.Fatal(err)
		}
		var bytes int64
		for _, it := range page.Items {
			bytes += storedSize(it)
		}
		counts, err := h.st.Get(context.Background(), h.countKey(alice))
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 3 || counts.Int(attrCount) != 3 || counts.Int(attrBytes) != bytes {
			t.Fatalf("%d memories of %d bytes stored, counted %d of %d", len(page.Items), bytes, counts.Int(attrCount), counts.Int(attrBytes))
		}
	})
}

func TestInvalidInputIsRefusedWithFieldErrors(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	meta := func(n int) string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, tc := range []struct {
		name, op, input string
		where           []string
	}{
		{"write needs text", OpWrite, `{}`, []string{"input.text"}},
		{"write text may not be empty", OpWrite, `{"text":""}`, []string{"input.text"}},
		{"write text may not be blank", OpWrite, `{"text":" \n\t "}`, []string{"input.text"}},
		{"write text is at most 8000 characters", OpWrite, `{"text":"` + long(8001) + `"}`, []string{"input.text"}},
		{"write text must be a string", OpWrite, `{"text":42}`, []string{"input.text"}},
		{"write metadata has at most 20 pairs", OpWrite, `{"text":"x","metadata":` + meta(21) + `}`, []string{"input.metadata"}},
		{"write metadata keys are at most 40 characters", OpWrite, `{"text":"x","metadata":{"` + strings.Repeat("k", 41) + `":"v"}}`, []string{"input.metadata." + strings.Repeat("k", 40) + "…"}},
		{"write metadata keys are not empty", OpWrite, `{"text":"x","metadata":{"":"v"}}`, []string{"input.metadata."}},
		{"write metadata values are at most 500 characters", OpWrite, `{"text":"x","metadata":{"k":"` + long(501) + `"}}`, []string{"input.metadata.k"}},
		{"write metadata values are strings", OpWrite, `{"text":"x","metadata":{"k":1}}`, []string{"input.metadata"}},
		{"write metadata is an object", OpWrite, `{"text":"x","metadata":["k"]}`, []string{"input.metadata"}},
		{"write reports every problem at once", OpWrite, `{"text":"","metadata":{"k":"` + long(501) + `"}}`, []string{"input.text", "input.metadata.k"}},
		{"unknown fields are refused", OpWrite, `{"text":"x","tags":["a"]}`, []string{"input.tags"}},
		{"input must be an object", OpWrite, `["text"]`, []string{"input"}},
		{"input must be JSON", OpWrite, `{"text":`, []string{"input"}},
		{"input may not carry trailing data", OpWrite, `{"text":"x"} {"text":"y"}`, []string{"input"}},
		{"input keys may not repeat", OpWrite, `{"text":"x","text":"y"}`, []string{"input.text"}},
		{"input keys may not differ only in case", OpDelete, `{"MemoryId":"mem_01ARZ3NDEKTSV4RRFFQ69G5FAV","memoryId":"mem_01ARZ3NDEKTSV4RRFFQ69G5FAW"}`, []string{"input.memoryId"}},
		{"metadata keys may not differ only in case", OpWrite, `{"text":"x","metadata":{"Lang":"de","lang":"en"}}`, []string{"input.metadata.lang"}},
		{"search needs a query", OpSearch, `{}`, []string{"input.query"}},
		{"search query is at most 500 characters", OpSearch, `{"query":"` + long(501) + `"}`, []string{"input.query"}},
		{"search limit is at least 1", OpSearch, `{"query":"x","limit":0}`, []string{"input.limit"}},
		{"search limit is at most 50", OpSearch, `{"query":"x","limit":51}`, []string{"input.limit"}},
		{"search limit is an integer", OpSearch, `{"query":"x","limit":2.5}`, []string{"input.limit"}},
		{"search limit is a number", OpSearch, `{"query":"x","limit":"10"}`, []string{"input.limit"}},
		{"list limit is at most 100", OpList, `{"limit":101}`, []string{"input.limit"}},
		{"list cursor must come from memory.list", OpList, `{"cursor":"not*base64"}`, []string{"input.cursor"}},
		{"list cursor must hold a memory id", OpList, `{"cursor":"` + "a2V5XzAx" + `"}`, []string{"input.cursor"}},
		{"delete needs a memory id", OpDelete, `{}`, []string{"input.memoryId"}},
		{"delete memory id must be a memory id", OpDelete, `{"memoryId":"prj_01ARZ3NDEKTSV4RRFFQ69G5FAV"}`, []string{"input.memoryId"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&harness{t: t, svc: New(nil, time.Now)}).invoke(alice, tc.op, tc.input)
			wantAPIError(t, err, apierr.ValidationFailed, tc.where...)
		})
	}
}

func TestTextOfExactly8000CharactersIsAccepted(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		text := strings.Repeat("é", maxTextChars) // 16000 bytes: characters count, not bytes
		in, _ := json.Marshal(map[string]any{"text": text})
		call[writeOutput](h, alice, OpWrite, string(in))
		if got := call[listOutput](h, alice, OpList, `{}`).Data[0].Text; got != text {
			t.Fatal("text changed in storage")
		}
	})
}

func TestUnknownOperationIsRefused(t *testing.T) {
	_, err := (&harness{t: t, svc: New(nil, time.Now)}).invoke(alice, "memory.purge", `{}`)
	wantAPIError(t, err, apierr.ValidationFailed, "operationId")
}
