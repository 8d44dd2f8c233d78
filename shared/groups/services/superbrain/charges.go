package superbrain

import (
	"fmt"

	"platformapi/shared/base/catalog"
)

// The exact charges, in micro-credits. The catalogue's PriceMicro of each
// operation is its maximum (what the pipeline holds); the charge is:
//
//   - memory.write: the full price, 10_000 (0.01 credits);
//   - memory.search: searchBaseMicro plus searchPerResultMicro for every
//     result returned, capped at the price: 5_000 + 1_000 × results, so
//     0.005 credits for no result up to 0.02 from 15 results on;
//   - memory.list and memory.delete: the full price, 5_000 (0.005) each.
//
// A failed operation charges nothing (Invoke returns no Result).
const (
	searchBaseMicro      = 5_000
	searchPerResultMicro = 1_000
)

// prices are the catalogue's maxima, read once: the catalogue is code, so
// a missing price is a programming error and stops the program at start.
var prices = func() map[string]int64 {
	svc, ok := catalog.Lookup(ServiceID)
	out := map[string]int64{}
	for _, op := range []string{OpWrite, OpSearch, OpList, OpDelete} {
		o, found := svc.Op(op)
		if !ok || !found || o.PriceMicro <= 0 {
			panic(fmt.Sprintf("superbrain: the catalogue has no price for %s %s", ServiceID, op))
		}
		out[op] = o.PriceMicro
	}
	return out
}()

// charge is the exact charge of a successful operation; results counts the
// results a search returned.
func charge(op string, results int) int64 {
	if op == OpSearch {
		return min(searchBaseMicro+int64(results)*searchPerResultMicro, prices[OpSearch])
	}
	return prices[op]
}
