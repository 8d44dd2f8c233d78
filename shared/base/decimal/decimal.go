// Package decimal reads and writes the API's decimal strings as fixed-point
// integers: a quantity with p places is the int64 count of 10^-p units. Money
// and quantities never pass through float64, whose binary fractions cannot
// hold 0.1 and whose rounding differs between a Go server and a JavaScript
// client. The only accepted form is plain positional notation, optionally
// signed: no exponent, no leading '+', no leading zeros, no bare '.', and
// never more fractional digits than the quantity has places (a value that
// cannot be held exactly is refused, never rounded).
package decimal

import (
	"errors"
	"math/big"
	"strings"
)

// MaxPlaces bounds the places of a scale: 10^18 is the largest power of ten
// an int64 holds.
const MaxPlaces = 18

// Errors of Parse; callers turn them into field errors.
var (
	ErrSyntax     = errors.New("not a plain decimal number (digits, one optional '.', no exponent)")
	ErrNegative   = errors.New("must not be negative")
	ErrPrecision  = errors.New("has more fractional digits than allowed")
	ErrOutOfRange = errors.New("is too large")
)

var pow10 = func() [MaxPlaces + 1]int64 {
	var p [MaxPlaces + 1]int64
	p[0] = 1
	for i := 1; i <= MaxPlaces; i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// Pow10 is 10^places.
func Pow10(places int) int64 { return pow10[places] }

// Parse reads s as a count of 10^-places units. Negative values are refused
// unless signed is true; "-0" is refused as a syntax error (it is not a
// canonical form of anything).
func Parse(s string, places int, signed bool) (int64, error) {
	if places < 0 || places > MaxPlaces {
		panic("decimal: places out of range")
	}
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || hasDot && frac == "" || !digits(intPart) || !digits(frac) {
		return 0, ErrSyntax
	}
	if len(intPart) > 1 && intPart[0] == '0' {
		return 0, ErrSyntax
	}
	if len(frac) > places {
		return 0, ErrPrecision
	}
	var v big.Int
	v.SetString(intPart+frac+strings.Repeat("0", places-len(frac)), 10)
	if neg {
		if v.Sign() == 0 {
			return 0, ErrSyntax
		}
		if !signed {
			return 0, ErrNegative
		}
		v.Neg(&v)
	}
	if !v.IsInt64() {
		return 0, ErrOutOfRange
	}
	return v.Int64(), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Format writes v units of 10^-places in canonical form: no trailing
// fractional zeros and no '.' for a whole number, so Parse(Format(v)) == v
// and two equal amounts always print the same.
func Format(v int64, places int) string {
	return FormatBig(big.NewInt(v), places)
}

// FormatBig is Format for a value that may exceed int64 (a product shown to
// a client, never stored).
func FormatBig(v *big.Int, places int) string {
	s := new(big.Int).Abs(v).String()
	if len(s) <= places {
		s = strings.Repeat("0", places-len(s)+1) + s
	}
	intPart, frac := s[:len(s)-places], strings.TrimRight(s[len(s)-places:], "0")
	out := intPart
	if frac != "" {
		out += "." + frac
	}
	if v.Sign() < 0 {
		out = "-" + out
	}
	return out
}

// Rounding says which way a quotient that is not whole goes.
type Rounding int

const (
	Down   Rounding = iota + 1 // toward negative infinity
	Up                         // toward positive infinity
	HalfUp                     // to nearest, halves away from zero
)

// MulDiv is a×b/d rounded as asked, computed exactly in big integers; ok is
// false when d is 0 or the result does not fit in an int64.
func MulDiv(a, b, d int64, r Rounding) (v int64, ok bool) {
	if d == 0 {
		return 0, false
	}
	n := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
	q := Div(n, big.NewInt(d), r)
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

// Div is n/d rounded as asked; d must not be 0.
func Div(n, d *big.Int, r Rounding) *big.Int {
	q, m := new(big.Int).QuoRem(n, d, new(big.Int))
	if m.Sign() == 0 {
		return q
	}
	// The exact quotient lies strictly between q and q+sign.
	sign := int64(1)
	if (n.Sign() < 0) != (d.Sign() < 0) {
		sign = -1
	}
	switch r {
	case Down:
		if sign < 0 {
			q.Sub(q, big.NewInt(1))
		}
	case Up:
		if sign > 0 {
			q.Add(q, big.NewInt(1))
		}
	case HalfUp:
		twice := new(big.Int).Abs(m)
		twice.Lsh(twice, 1)
		if twice.Cmp(new(big.Int).Abs(d)) >= 0 {
			q.Add(q, big.NewInt(sign))
		}
	default:
		panic("decimal: unknown rounding")
	}
	return q
}

// Mul is a×b, ok false on int64 overflow.
func Mul(a, b int64) (int64, bool) {
	return MulDiv(a, b, 1, Down)
}

// Add is a+b, ok false on int64 overflow.
func Add(a, b int64) (int64, bool) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, false
	}
	return s, true
}
