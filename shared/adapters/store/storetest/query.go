package storetest

import (
	"strings"
	"testing"

	"platformapi/shared/adapters/store"
)

func wantSKs(t *testing.T, page store.Page, more bool, sks ...string) {
	t.Helper()
	var got []string
	for _, it := range page.Items {
		got = append(got, it.Key().SK)
	}
	if strings.Join(got, ",") != strings.Join(sks, ",") || page.More != more {
		t.Fatalf("page = %v more=%v; want %v more=%v", got, page.More, sks, more)
	}
}

// seedQuery fills partition "q" (and neighbours that must never leak into
// it) with sort keys a#1..a#5, b#1, b#2 and an expired a#3.
func seedQuery(t *testing.T, s store.Store) {
	for _, sk := range []string{"a#1", "a#2", "a#4", "a#5", "b#1", "b#2"} {
		mustPut(t, s, item(store.Key{PK: "q", SK: sk}))
	}
	mustPut(t, s, item(store.Key{PK: "q", SK: "a#3"}, "expiresAt", past()))
	mustPut(t, s, item(store.Key{PK: "qq", SK: "a#1"}))
	mustPut(t, s, item(store.Key{PK: "p", SK: "z"}))
}

var queryRules = []rule{
	{"QueryFollowsSortKeyOrderWithinOnePartition", func(t *testing.T, s store.Store) {
		seedQuery(t, s)
		cases := []struct {
			name string
			q    store.Query
			more bool
			sks  []string
		}{
			{"WholePartitionAscending", store.Query{}, false, []string{"a#1", "a#2", "a#4", "a#5", "b#1", "b#2"}},
			{"WholePartitionDescending", store.Query{Reverse: true}, false, []string{"b#2", "b#1", "a#5", "a#4", "a#2", "a#1"}},
			{"PrefixSelectsSortKeys", store.Query{Prefix: "a#"}, false, []string{"a#1", "a#2", "a#4", "a#5"}},
			{"PrefixDescending", store.Query{Prefix: "a#", Reverse: true}, false, []string{"a#5", "a#4", "a#2", "a#1"}},
			{"PrefixMatchingNothing", store.Query{Prefix: "c"}, false, nil},
			{"LimitSetsMore", store.Query{Limit: 2}, true, []string{"a#1", "a#2"}},
			{"LimitSkipsExpiredItemsWithoutShrinkingThePage", store.Query{Prefix: "a#", Limit: 3}, true, []string{"a#1", "a#2", "a#4"}},
			{"LimitEqualToTheRestHasNoMore", store.Query{Prefix: "a#", Limit: 4}, false, []string{"a#1", "a#2", "a#4", "a#5"}},
			{"AfterIsExclusive", store.Query{After: "a#2"}, false, []string{"a#4", "a#5", "b#1", "b#2"}},
			{"AfterNeedNotBeAStoredKey", store.Query{After: "a#3"}, false, []string{"a#4", "a#5", "b#1", "b#2"}},
			{"AfterDescendingGoesDown", store.Query{After: "b#1", Reverse: true}, false, []string{"a#5", "a#4", "a#2", "a#1"}},
			{"AfterWithPrefix", store.Query{Prefix: "a#", After: "a#4"}, false, []string{"a#5"}},
			{"AfterBelowPrefix", store.Query{Prefix: "b#", After: "a#9"}, false, []string{"b#1", "b#2"}},
			{"AfterAbovePrefixDescending", store.Query{Prefix: "a#", After: "z", Reverse: true, Limit: 1}, true, []string{"a#5"}},
			{"AfterPastTheEnd", store.Query{After: "z"}, false, nil},
			{"PagesChainThroughAfter", store.Query{After: "a#4", Limit: 2}, true, []string{"a#5", "b#1"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.q.PK = "q"
				page, err := s.Query(ctx(t), c.q)
				if err != nil {
					t.Fatal(err)
				}
				wantSKs(t, page, c.more, c.sks...)
			})
		}
	}},
	{"QueryOfEmptyPartitionIsEmpty", func(t *testing.T, s store.Store) {
		page, err := s.Query(ctx(t), store.Query{PK: "nothing", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		wantSKs(t, page, false)
	}},
	{"QueryReturnsWholeItems", func(t *testing.T, s store.Store) {
		it := item(store.Key{PK: "q", SK: "x"}, "s", "v", "n", int64(2), "b", []byte("z"))
		mustPut(t, s, it)
		page, err := s.Query(ctx(t), store.Query{PK: "q"})
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("query = %v, %v", page, err)
		}
		wantAttrs(t, page.Items[0], it)
	}},
	{"QueryLimitSurvivesManyExpiredItems", func(t *testing.T, s store.Store) {
		for i := range 30 {
			mustPut(t, s, item(store.Key{PK: "q", SK: "e#" + string(rune('a'+i))}, "expiresAt", past()))
		}
		mustPut(t, s, item(store.Key{PK: "q", SK: "z#1"}))
		mustPut(t, s, item(store.Key{PK: "q", SK: "z#2"}))
		page, err := s.Query(ctx(t), store.Query{PK: "q", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		wantSKs(t, page, true, "z#1")
	}},
}
