package decimal

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestParseAcceptsOnlyPlainExactDecimals(t *testing.T) {
	cases := []struct {
		in     string
		places int
		signed bool
		want   int64
		err    error
	}{
		{"0", 8, false, 0, nil},
		{"1", 8, false, 100000000, nil},
		{"0.00000001", 8, false, 1, nil},
		{"12.5", 2, false, 1250, nil},
		{"-12.5", 2, true, -1250, nil},
		{"-12.5", 2, false, 0, ErrNegative},
		{"-0", 2, true, 0, ErrSyntax},
		{"0.000000001", 8, false, 0, ErrPrecision},
		{"1e3", 8, false, 0, ErrSyntax},
		{"1E3", 8, false, 0, ErrSyntax},
		{"1.5e-2", 8, false, 0, ErrSyntax},
		{"+1", 8, false, 0, ErrSyntax},
		{".5", 8, false, 0, ErrSyntax},
		{"5.", 8, false, 0, ErrSyntax},
		{"", 8, false, 0, ErrSyntax},
		{"-", 8, true, 0, ErrSyntax},
		{"01", 8, false, 0, ErrSyntax},
		{"1,5", 8, false, 0, ErrSyntax},
		{" 1", 8, false, 0, ErrSyntax},
		{"NaN", 8, false, 0, ErrSyntax},
		{"Inf", 8, false, 0, ErrSyntax},
		{"0x10", 8, false, 0, ErrSyntax},
		{"1.2.3", 8, false, 0, ErrSyntax},
		{"92233720368.54775807", 8, false, math.MaxInt64, nil},
		{"92233720368.54775808", 8, false, 0, ErrOutOfRange},
		{"-92233720368.54775808", 8, true, math.MinInt64, nil},
		{strings.Repeat("9", 40), 0, false, 0, ErrOutOfRange},
	}
	for _, c := range cases {
		got, err := Parse(c.in, c.places, c.signed)
		if !errors.Is(err, c.err) || got != c.want {
			t.Errorf("Parse(%q, %d) = %d, %v; want %d, %v", c.in, c.places, got, err, c.want, c.err)
		}
	}
}

func TestFormatIsCanonical(t *testing.T) {
	cases := []struct {
		v      int64
		places int
		want   string
	}{
		{0, 8, "0"}, {1, 8, "0.00000001"}, {150000000, 8, "1.5"}, {-1250, 2, "-12.5"},
		{200000, 2, "2000"}, {math.MinInt64, 8, "-92233720368.54775808"}, {7, 0, "7"},
	}
	for _, c := range cases {
		if got := Format(c.v, c.places); got != c.want {
			t.Errorf("Format(%d, %d) = %q, want %q", c.v, c.places, got, c.want)
		}
	}
}

func TestMulDivRoundsAsAsked(t *testing.T) {
	cases := []struct {
		a, b, d int64
		r       Rounding
		want    int64
	}{
		{7, 1, 2, Down, 3}, {7, 1, 2, Up, 4}, {7, 1, 2, HalfUp, 4}, {5, 1, 3, HalfUp, 2},
		{-7, 1, 2, Down, -4}, {-7, 1, 2, Up, -3}, {-7, 1, 2, HalfUp, -4}, {6, 1, 2, Up, 3},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64, Down, math.MaxInt64},
	}
	for _, c := range cases {
		got, ok := MulDiv(c.a, c.b, c.d, c.r)
		if !ok || got != c.want {
			t.Errorf("MulDiv(%d,%d,%d,%d) = %d,%v; want %d", c.a, c.b, c.d, c.r, got, ok, c.want)
		}
	}
	if _, ok := MulDiv(math.MaxInt64, 2, 1, Down); ok {
		t.Error("overflow not reported")
	}
	if _, ok := MulDiv(1, 1, 0, Down); ok {
		t.Error("division by zero not reported")
	}
	if _, ok := Add(math.MaxInt64, 1); ok {
		t.Error("Add overflow not reported")
	}
}

// FuzzParse: whatever the input, Parse either refuses it or returns the
// exact value its digits say, and Format writes that value back in a form
// Parse reads to the same number.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "1.5", "-0.00000001", "1e5", "92233720368.54775807", "00.1", ".", "-", "1.000000000"} {
		f.Add(s, uint8(8))
	}
	f.Fuzz(func(t *testing.T, s string, p uint8) {
		places := int(p % (MaxPlaces + 1))
		v, err := Parse(s, places, true)
		if err != nil {
			return
		}
		if strings.ContainsAny(s, "eE+ ") {
			t.Fatalf("accepted %q", s)
		}
		// The value equals the digits read as a rational number.
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("accepted %q that is not a number", s)
		}
		want := new(big.Rat).Mul(r, new(big.Rat).SetInt64(Pow10(places)))
		if !want.IsInt() || want.Num().Int64() != v {
			t.Fatalf("Parse(%q, %d) = %d, want %s", s, places, v, want)
		}
		back, err := Parse(Format(v, places), places, true)
		if err != nil || back != v {
			t.Fatalf("round trip of %d: %q -> %d, %v", v, Format(v, places), back, err)
		}
	})
}
