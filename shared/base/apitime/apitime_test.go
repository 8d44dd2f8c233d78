package apitime_test

import (
	stdjson "encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"platformapi/shared/base/apitime"
)

type nested struct {
	At    time.Time  `json:"at"`
	Maybe *time.Time `json:"maybe,omitempty"`
	None  *time.Time `json:"none"`
	Any   any        `json:"any"`
	List  []struct {
		When time.Time `json:"when"`
	} `json:"list"`
	Raw   stdjson.RawMessage `json:"raw"`
	Text  string             `json:"text"`
	Empty []string           `json:"empty"`
	Map   map[string]int     `json:"map"`
	Num   stdjson.Number     `json:"num"`
	Zero  stdjson.Number     `json:"zero"`
}

// TestEveryTimeIsUTCWithThreeFractionalDigits covers every place a
// time.Time can sit in a response: a field, behind a pointer, in an
// interface, in a list; other values encode as encoding/json does.
func TestEveryTimeIsUTCWithThreeFractionalDigits(t *testing.T) {
	at := time.Date(2026, 11, 26, 8, 25, 47, 960_000_000, time.FixedZone("CET", 3600))
	whole := time.Date(2026, 11, 26, 7, 25, 47, 0, time.UTC)
	nanos := time.Date(2026, 11, 26, 7, 25, 47, 961_999_999, time.UTC)
	v := nested{At: at, Maybe: &whole, Any: nanos, Raw: stdjson.RawMessage(`{"b":1, "a":"<x>"}`), Text: "<&> 2026-11-26T07:25:47.96Z",
		Map: map[string]int{"b": 2, "a": 1}, Num: "0.1"}
	v.List = append(v.List, struct {
		When time.Time `json:"when"`
	}{whole})
	got, err := apitime.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"at":"2026-11-26T07:25:47.960Z","maybe":"2026-11-26T07:25:47.000Z","none":null,"any":"2026-11-26T07:25:47.961Z",` +
		`"list":[{"when":"2026-11-26T07:25:47.000Z"}],"raw":{"b":1,"a":"<x>"},"text":"<&> 2026-11-26T07:25:47.96Z","empty":null,"map":{"a":1,"b":2},"num":0.1,"zero":0}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	var b strings.Builder
	if err := apitime.Encode(&b, map[string]any{"t": whole}); err != nil || b.String() != `{"t":"2026-11-26T07:25:47.000Z"}`+"\n" {
		t.Fatalf("Encode = %q, %v", b.String(), err)
	}
}

// TestValuesWithoutTimesEncodeAsHumaDefaultDoes: the kernel's format
// changed only for times, so every other body keeps its bytes.
func TestValuesWithoutTimesEncodeAsHumaDefaultDoes(t *testing.T) {
	type inner struct {
		A string             `json:"a,omitempty"`
		B *int               `json:"b"`
		C []byte             `json:"c"`
		D map[string]any     `json:"d"`
		E stdjson.Number     `json:"e"`
		F int64              `json:"f,string"`
		G float64            `json:"g"`
		H []string           `json:"h"`
		I stdjson.RawMessage `json:"i,omitempty"`
	}
	for _, v := range []any{
		inner{},
		inner{A: "<a&b>", C: []byte("x"), D: map[string]any{"z": 1, "y": []any{"é", nil}}, E: "12.50", F: 7, G: 1e21, H: []string{}, I: stdjson.RawMessage(`[1]`)},
		[]any{nil, true, 0.000001, "\u2028"},
	} {
		var want strings.Builder
		enc := stdjson.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		if err := apitime.Encode(&got, v); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("got  %s want %s", got.String(), want.String())
		}
	}
}

type Base struct {
	ID      string    `json:"id"`
	Created time.Time `json:"createdAt"`
	Shadow  string
}

type Other struct {
	Shadow string
	When   time.Time `json:"when"`
}

type withEmbedded struct {
	Base
	*Other
	Shadow  string    `json:"Shadow,omitempty"`
	Skip    time.Time `json:"-"`
	private time.Time
	Count   int64             `json:"count,string"`
	Flag    *bool             `json:"flag,string"`
	Zero    time.Time         `json:"zero,omitzero"`
	Opt     *time.Time        `json:"opt,omitempty"`
	ByInt   map[int]time.Time `json:"byInt"`
	Fixed   [2]time.Time      `json:"fixed"`
	//lint:ignore SA5008 encoding/json names this field "-", and Marshal must write it alike
	Dash   string           `json:"-,"`
	Iface  fmt.Stringer     `json:"iface"`
	Nested map[string][]any `json:"nested"`
}

// TestTimesEncodeWhereEncodingJSONPutsThem: a UTC time with three
// significant fractional digits is written alike by encoding/json and by
// Marshal, so for such values Marshal's bytes must be encoding/json's in
// every shape a struct can take (promoted fields, shadowing, nil embedded
// pointers, tag options, map keys, arrays, interfaces).
func TestTimesEncodeWhereEncodingJSONPutsThem(t *testing.T) {
	at := time.Date(2026, 11, 26, 7, 25, 47, 961_000_000, time.UTC)
	yes := true
	for _, v := range []any{
		withEmbedded{Base: Base{ID: "a", Created: at, Shadow: "hidden"}, Other: &Other{Shadow: "hidden", When: at}, Shadow: "<top>",
			Skip: at, private: at, Count: 42, Flag: &yes, Zero: at, Opt: &at, ByInt: map[int]time.Time{10: at, 2: at},
			Fixed: [2]time.Time{at, at}, Dash: "d", Nested: map[string][]any{"b": {at, 1.5, nil}, "a": {}}},
		&withEmbedded{Base: Base{Created: at}, Fixed: [2]time.Time{at, at}},
		map[string]any{"z": []time.Time{at}, "a": &at},
	} {
		var want strings.Builder
		enc := stdjson.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		got, err := apitime.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got)+"\n" != want.String() {
			t.Errorf("got  %s\nwant %s", got, want.String())
		}
	}
}

type textName string

func (n textName) MarshalText() ([]byte, error) { return []byte("text:" + string(n)), nil }

type jsonCount int

func (c jsonCount) MarshalJSON() ([]byte, error) { return []byte(`"count"`), nil }

// A struct that holds a time is walked field by field, and its strings,
// bools and integers are written without encoding/json: their bytes must
// stay encoding/json's (HTML unescaped), escapes, methods and
// json.Number included.
func TestPlainFieldsBesideATimeEncodeAsEncodingJSONDoes(t *testing.T) {
	type row struct {
		At     *time.Time     `json:"at"`
		S      string         `json:"s"`
		B      bool           `json:"b"`
		I8     int8           `json:"i8"`
		I      int64          `json:"i"`
		U      uint64         `json:"u"`
		Q      int64          `json:"q,string"`
		Name   textName       `json:"name"`
		Count  jsonCount      `json:"count"`
		Num    stdjson.Number `json:"num"`
		Absent string         `json:"absent,omitempty"`
	}
	for _, s := range []string{"", "plain", `quote " and \ back`, "<a&b>", "tab\tnew\nline\x01", "é ü", "line\u2028sep", "bad\xffutf8", "~\x7f"} {
		v := row{S: s, B: true, I8: -8, I: -1 << 62, U: 1<<64 - 1, Q: 42, Name: textName(s), Count: 3, Num: "1.50"}
		got, err := apitime.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		enc := stdjson.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if string(got)+"\n" != want.String() {
			t.Errorf("%q:\ngot  %s\nwant %s", s, got, want.String())
		}
	}
}

// BenchmarkMarshalKeyLike is a response the size of an API key's: a dozen
// plain fields and two times.
func BenchmarkMarshalKeyLike(b *testing.B) {
	at := time.Date(2026, 11, 26, 8, 25, 47, 960_000_000, time.UTC)
	v := struct {
		ID, AccountID, Name, Prefix, PrivacyTier string
		Scopes                                   []string
		Depth                                    int
		Revoked                                  bool
		CreatedAt                                time.Time
		ExpiresAt                                *time.Time
		LastUsedAt                               *time.Time
	}{"key_01JBENCH", "acct_01JBENCH", "bench key", "sk_live_ab", "standard", []string{"projects:read", "credits:read"}, 2, false, at, &at, nil}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := apitime.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}
