// Package ids makes the API's resource identifiers: a type prefix and a
// 26-character Crockford base32 body whose first 10 characters are the
// creation time in milliseconds, so identifiers sort by creation, and whose
// last 16 carry 80 random bits, so they cannot be guessed.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"time"
)

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// New returns prefix + "_" + a sortable random body, e.g. key_01J9Z3....
func New(prefix string, now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("ids: crypto/rand failed: " + err.Error())
	}
	var sb strings.Builder
	sb.Grow(len(prefix) + 27)
	sb.WriteString(prefix)
	sb.WriteByte('_')
	// 128 bits -> 26 base32 digits (130 bits, top two zero).
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	for i := 25; i >= 0; i-- {
		shift := uint(i * 5)
		var v uint64
		switch {
		case shift >= 64:
			v = hi >> (shift - 64)
		case shift > 59:
			v = lo>>shift | hi<<(64-shift)
		default:
			v = lo >> shift
		}
		sb.WriteByte(alphabet[v&31])
	}
	return sb.String()
}

// Valid reports whether s looks like an identifier with the given prefix.
func Valid(prefix, s string) bool {
	body, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || len(body) != 26 {
		return false
	}
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(alphabet, body[i]) < 0 {
			return false
		}
	}
	return true
}

// Time is when identifier s of the given prefix was made, read from its
// first 10 characters; false when s is not such an identifier.
func Time(prefix, s string) (time.Time, bool) {
	if !Valid(prefix, s) {
		return time.Time{}, false
	}
	var ms uint64
	for _, c := range []byte(s[len(prefix)+1:][:10]) {
		ms = ms<<5 | uint64(strings.IndexByte(alphabet, c))
	}
	return time.UnixMilli(int64(ms)), true
}
