package throttlestore

import (
	"math"

	"platformapi/shared/adapters/store"
)

// Request units as DynamoDB bills them. Every read of the store port is
// strongly consistent (revocation must act on the next request), so no read
// is billed at the half unit of an eventually consistent one.

// ReadUnits of a strongly consistent read of size bytes: one per 4 KB,
// rounded up, and one for an item that is not there.
func ReadUnits(size int) float64 { return max(1, math.Ceil(float64(size)/4096)) }

// WriteUnits of a write of size bytes: one per KB, rounded up, at least one.
// A member of a transaction costs twice this.
func WriteUnits(size int) float64 { return max(1, math.Ceil(float64(size)/1024)) }

// ItemSize is an item's size under DynamoDB's rule: attribute names plus
// values, a number taking one byte per two significant digits plus one.
func ItemSize(it store.Item) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

// KeySize is the size of an item holding only its key.
func KeySize(k store.Key) int {
	return len(store.AttrPK) + len(k.PK) + len(store.AttrSK) + len(k.SK)
}

// UpdateSize is what an update leaves in an item it creates: the key and
// every attribute it sets or adds.
func UpdateSize(k store.Key, u store.Update) int {
	n := KeySize(k)
	for name, v := range u.Set {
		n += len(name) + valueSize(v)
	}
	for name, v := range u.Add {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v any) int {
	switch v := v.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	case bool:
		return 1
	case int64:
		digits := 1
		for v /= 10; v != 0; v /= 10 {
			digits++
		}
		return (digits+1)/2 + 1
	}
	return 0
}
