package superbrain

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
)

// The corpus of the hand-checked ranking. After tokenising (lower case,
// punctuation and the stop words "the", "and", "a", "no" dropped):
//
//	d1 = [apple banana]                  |d1| = 2
//	d2 = [apple apple cherry]            |d2| = 3
//	d3 = [banana cherry cherry date]     |d3| = 4
//	d4 = [date elderberry]               |d4| = 2
//
// N = 4, avgdl = 11/4 = 2.75, k1 = 1.2, b = 0.75. With
// norm(D) = k1·(1 − b + b·|D|/avgdl): norm(d1) = norm(d4) = 0.954545…,
// norm(d2) = 1.281818…, norm(d3) = 1.609090….
//
// Query "apple cherry": df = 2 for both, idf = ln(1 + 2.5/2.5) = ln 2.
//
//	d2 = ln2·2·2.2/(2+1.281818) + ln2·1·2.2/(1+1.281818) = 1.597610
//	d3 = ln2·2·2.2/(2+1.609091)                          = 0.845046
//	d1 = ln2·1·2.2/(1+0.954545)                          = 0.780194
//
// d3 beats d1 although it is longer: two cherries outweigh the length.
//
// Query "elderberry banana": idf(elderberry) = ln(1 + 3.5/1.5) = 1.203973,
// idf(banana) = ln 2.
//
//	d4 = 1.203973·2.2/(1+0.954545) = 1.355169 (the rare term wins)
//	d1 = ln2·2.2/(1+0.954545)      = 0.780194
//	d3 = ln2·2.2/(1+1.609091)      = 0.584466
var corpus = []string{
	"The Apple and the Banana.",
	"apple, APPLE; cherry!",
	"A banana, a cherry; no, the cherry and a date.",
	"Date & elderberry",
}

func TestSearchRanksByBM25(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		// Another account's memories must change neither N, df nor avgdl.
		for range 5 {
			h.write(who{account: "acct_noise"}, "apple apple apple cherry elderberry")
		}
		mem := make([]string, len(corpus))
		for i, text := range corpus {
			mem[i] = h.write(alice, text)
		}
		for _, tc := range []struct {
			query  string
			order  []int
			scores []float64
		}{
			{"apple cherry", []int{1, 2, 0}, []float64{1.597610, 0.845046, 0.780194}},
			{"Elderberry BANANA", []int{3, 0, 2}, []float64{1.355169, 0.780194, 0.584466}},
			{"the apple of the apple", []int{1, 0}, nil}, // repeated and stop words count once and never
		} {
			hits := h.search(alice, tc.query, 10)
			if len(hits) != len(tc.order) {
				t.Fatalf("%q: %d hits, want %d", tc.query, len(hits), len(tc.order))
			}
			for i, d := range tc.order {
				if hits[i].ID != mem[d] {
					t.Errorf("%q: hit %d is %q, want d%d %q", tc.query, i, hits[i].Text, d+1, corpus[d])
				}
				if tc.scores != nil && math.Abs(hits[i].Score-tc.scores[i]) > 5e-6 {
					t.Errorf("%q: d%d scored %.6f, want %.6f", tc.query, d+1, hits[i].Score, tc.scores[i])
				}
			}
		}
	})
}

func TestSearchStatisticsSpanEveryPageOfTheScan(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		for _, text := range append(slices.Clone(corpus), "cherry pie", "apple pie", "more apple pie") {
			h.write(alice, text)
		}
		whole := h.search(alice, "apple cherry pie", 10)
		h.svc.scanPage = 2
		paged := h.search(alice, "apple cherry pie", 10)
		if len(whole) != 6 || !reflect.DeepEqual(whole, paged) {
			t.Fatalf("in one page %v\nin pages of 2 %v", whole, paged)
		}
	})
}

func TestSearchBreaksTiesByRecency(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		older := h.write(alice, "same words here")
		other := h.write(alice, "unrelated")
		newer := h.write(alice, "Same words, here!")
		if got := hitIDs(h.search(alice, "words", 10)); !slices.Equal(got, []string{newer, older}) {
			t.Fatalf("got %v, want newer %s then older %s (not %s)", got, newer, older, other)
		}
	})
}

func TestSearchReturnsAtMostLimitResults(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		for i := range 12 {
			h.write(alice, fmt.Sprintf("note number %d", i))
		}
		if n := len(call[searchOutput](h, alice, OpSearch, `{"query":"note"}`).Results); n != defaultSearchHits {
			t.Errorf("default limit returned %d", n)
		}
		if n := len(h.search(alice, "note", 3)); n != 3 {
			t.Errorf("limit 3 returned %d", n)
		}
		if n := len(h.search(alice, "note", 50)); n != 12 {
			t.Errorf("limit 50 returned %d", n)
		}
	})
}

func TestSearchFindsNothingForStopWordsOrAnEmptyScope(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		if hits := h.search(alice, "anything", 10); len(hits) != 0 {
			t.Fatalf("empty scope found %v", hits)
		}
		h.write(alice, "Hamlet: to be or not to be")
		for _, q := range []string{"to be or not to be", "?!", "absent"} {
			out := call[searchOutput](h, alice, OpSearch, `{"query":"`+q+`"}`)
			if out.Results == nil || len(out.Results) != 0 {
				t.Errorf("%q: got %v, want []", q, out.Results)
			}
		}
		if hits := h.search(alice, "To be, Hamlet?", 10); len(hits) != 1 {
			t.Errorf("the one searchable word must match: %v", hits)
		}
	})
}

func TestSearchMatchesWordsInAnyScript(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		ru := h.write(alice, "Привет, мир!")
		fr := h.write(alice, "Un café naïf")
		if got := hitIDs(h.search(alice, "МИР", 10)); !slices.Equal(got, []string{ru}) {
			t.Errorf("cyrillic: %v", got)
		}
		if got := hitIDs(h.search(alice, "CAFÉ", 10)); !slices.Equal(got, []string{fr}) {
			t.Errorf("latin with accents: %v", got)
		}
	})
}
