package ids

import (
	"sort"
	"testing"
	"time"
)

func TestIdentifiersSortByCreationTime(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var got []string
	for i := 0; i < 100; i++ {
		got = append(got, New("key", base.Add(time.Duration(i)*time.Millisecond)))
	}
	if !sort.StringsAreSorted(got) {
		t.Fatalf("identifiers are not in creation order: %v", got[:5])
	}
}

func TestIdentifiersAreUniqueWithinOneMillisecond(t *testing.T) {
	now := time.Now()
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		id := New("prj", now)
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
}

func TestValidChecksPrefixAndAlphabet(t *testing.T) {
	id := New("acct", time.Now())
	for _, tc := range []struct {
		prefix, s string
		want      bool
	}{
		{"acct", id, true},
		{"key", id, false},
		{"acct", id + "X", false},
		{"acct", "acct_" + "0123456789ABCDEFGHJKMNPQRU", false},
	} {
		if got := Valid(tc.prefix, tc.s); got != tc.want {
			t.Errorf("Valid(%q, %q) = %v, want %v", tc.prefix, tc.s, got, tc.want)
		}
	}
}

func TestAnIdentifierTellsWhenItWasMade(t *testing.T) {
	for _, at := range []time.Time{time.UnixMilli(0), time.Date(2026, 11, 29, 14, 20, 1, 123e6, time.UTC), time.UnixMilli(1<<48 - 1)} {
		got, ok := Time("acct", New("acct", at))
		if !ok || !got.Equal(at) {
			t.Errorf("made at %v, read %v (%v)", at, got, ok)
		}
	}
	for _, s := range []string{"acct_A", "key_01J9Z3ABCDEFGHJKMNPQRSTVWX", ""} {
		if _, ok := Time("acct", s); ok {
			t.Errorf("%q read as an account id", s)
		}
	}
}
