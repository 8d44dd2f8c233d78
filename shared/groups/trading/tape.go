package trading

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"time"
)

// Symbol is one instrument of the paper venue. Prices are in cents
// (PricePlaces), depth in quantity units (QtyPlaces).
type Symbol struct {
	Name      string
	BaseCents int64 // the level the tape oscillates around
	VolPPM    int64 // amplitude of the finest octave, parts per million of the base
	SpreadBps int64 // bid/ask spread, basis points of the mid
	DepthQty  int64 // nominal quantity one order may take in one minute
}

// DefaultSymbols are the paper venue's instruments.
var DefaultSymbols = []Symbol{
	{Name: "BTC-USD", BaseCents: 60_000_00, VolPPM: 1000, SpreadBps: 4, DepthQty: 2 * qtyUnit},
	{Name: "ETH-USD", BaseCents: 3_000_00, VolPPM: 1200, SpreadBps: 6, DepthQty: 40 * qtyUnit},
	{Name: "SOL-USD", BaseCents: 150_00, VolPPM: 1500, SpreadBps: 10, DepthQty: 800 * qtyUnit},
}

// DefaultSeed seeds the paper tape when the configuration names none, so
// that every installation without its own seed sees the same prices.
const DefaultSeed = "platformapi-paper-tape-v1"

// tapeOctaves is the number of octaves of the tape: the slowest one moves
// over 2^11 = 2048 minutes (about 34 hours).
const tapeOctaves = 12

// Top is the paper tape at one minute: mid, bid and ask in cents and the
// quantity one order may take in that minute.
type Top struct {
	Minute   int64 // unix minutes: floor(unix seconds / 60)
	Mid      int64
	Bid, Ask int64
	Depth    int64
}

// Tape is the paper venue's price source: a pure function of (seed, symbol,
// minute), so every price it ever printed can be recomputed by anyone who
// knows the seed, and two servers agree without talking to each other.
//
// The formula (all integer arithmetic; "/" truncates toward zero):
//
//	m        = floor(unixSeconds / 60)
//	H(s)     = first 8 bytes, big-endian, of HMAC-SHA256(seed, s), as uint64
//	A_o      = VolPPM × 2^floor(o/2)                      for octave o = 0…11
//	u(o, j)  = H(symbol "|" o "|" j) mod (2·A_o + 1) − A_o   (ppm, in [−A_o, A_o])
//	L = 2^o, j = floor(m / L), r = m mod L
//	wave_o   = (u(o, j)·(L − r) + u(o, j+1)·r) / L         (linear between knots)
//	offset   = Σ_o wave_o                                   (ppm)
//	mid      = (BaseCents·(10^6 + offset) + 500000) / 10^6  (cents, half up)
//	half     = max(1, ceil(mid·SpreadBps / 20000))          (cents)
//	bid      = mid − half,  ask = mid + half
//	depth    = DepthQty·(50 + H(symbol "|depth|" m) mod 101) / 100
//
// It is a sum of twelve octaves of interpolated noise rather than a random
// walk (a product of per-minute moves): a walk needs every earlier minute to
// price the current one, while this needs 24 HMACs for any minute, and it
// stays within ±126·VolPPM of the base forever (±12.6% for BTC-USD).
type Tape struct {
	seed    []byte
	symbols map[string]Symbol
}

// NewTape builds the tape for the given symbols and seed.
func NewTape(seed []byte, symbols []Symbol) *Tape {
	t := &Tape{seed: append([]byte(nil), seed...), symbols: map[string]Symbol{}}
	for _, s := range symbols {
		t.symbols[s.Name] = s
	}
	return t
}

// Symbol returns the instrument named name.
func (t *Tape) Symbol(name string) (Symbol, bool) { s, ok := t.symbols[name]; return s, ok }

// Minute is the tape minute of a time.
func Minute(at time.Time) int64 {
	s := at.Unix()
	if s < 0 {
		return (s - 59) / 60
	}
	return s / 60
}

// At prices symbol at minute m. The symbol must exist.
func (t *Tape) At(symbol string, m int64) Top {
	s := t.symbols[symbol]
	var offset int64
	for o := 0; o < tapeOctaves; o++ {
		a := s.VolPPM << (o / 2)
		l := int64(1) << o
		j, r := m>>o, m&(l-1) // floor division and modulus for any sign
		u0, u1 := t.knot(symbol, o, j, a), t.knot(symbol, o, j+1, a)
		offset += (u0*(l-r) + u1*r) / l
	}
	mid := (s.BaseCents*(1_000_000+offset) + 500_000) / 1_000_000
	half := max(1, (mid*s.SpreadBps+19_999)/20_000)
	h := t.h(symbol + "|depth|" + strconv.FormatInt(m, 10))
	depth := s.DepthQty * (50 + int64(h%101)) / 100
	return Top{Minute: m, Mid: mid, Bid: mid - half, Ask: mid + half, Depth: depth}
}

func (t *Tape) knot(symbol string, o int, j, a int64) int64 {
	h := t.h(symbol + "|" + strconv.Itoa(o) + "|" + strconv.FormatInt(j, 10))
	return int64(h%uint64(2*a+1)) - a
}

func (t *Tape) h(s string) uint64 {
	m := hmac.New(sha256.New, t.seed)
	m.Write([]byte(s))
	return binary.BigEndian.Uint64(m.Sum(nil)[:8])
}
