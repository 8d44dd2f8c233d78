package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"platformapi/shared/store"
)

// Keys are laid out as uvarint(len(pk)) ‖ pk ‖ sk. The length prefix keeps
// partitions apart (pk "a" never sees pk "ab") while bbolt's byte order
// sorts the sort keys of one partition exactly as DynamoDB sorts S keys.
func partitionPrefix(pk string) []byte {
	b := binary.AppendUvarint(nil, uint64(len(pk)))
	return append(b, pk...)
}

func encodeKey(k store.Key) []byte {
	return append(partitionPrefix(k.PK), k.SK...)
}

// successor returns the smallest byte string greater than every string that
// starts with b, or nil when no such string exists (b is all 0xff).
func successor(b []byte) []byte {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xff {
			s := append([]byte(nil), b[:i+1]...)
			s[i]++
			return s
		}
	}
	return nil
}

const (
	tagString byte = iota + 1
	tagInt
	tagBool
	tagBytes
)

// encodeItem serialises an item whose values were already validated.
func encodeItem(it store.Item) []byte {
	b := binary.AppendUvarint(nil, uint64(len(it)))
	for name, v := range it {
		b = appendString(b, name)
		switch v := v.(type) {
		case string:
			b = appendString(append(b, tagString), v)
		case int64:
			b = binary.AppendVarint(append(b, tagInt), v)
		case bool:
			x := byte(0)
			if v {
				x = 1
			}
			b = append(b, tagBool, x)
		case []byte:
			b = appendString(append(b, tagBytes), string(v))
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errCorrupt = errors.New("boltstore: corrupt item encoding")

// decodeItem copies everything out of b: bbolt's value slices are only valid
// inside their transaction. The copy is one string, of which every name and
// string value is a substring, so that reading an item of n attributes
// costs one allocation for its text instead of 2n (the hot path reads a
// key chain and an account on every request).
func decodeItem(raw []byte) (store.Item, error) {
	text := string(raw)
	n, b, err := readUvarint(text)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(b)) {
		return nil, errCorrupt
	}
	it := make(store.Item, n)
	for range n {
		var name, s string
		if name, b, err = readString(b); err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, errCorrupt
		}
		tag := b[0]
		b = b[1:]
		switch tag {
		case tagString:
			s, b, err = readString(b)
			it[name] = s
		case tagBytes:
			s, b, err = readString(b)
			it[name] = []byte(s)
		case tagInt:
			v, k := varint(b)
			if k <= 0 {
				return nil, errCorrupt
			}
			it[name], b = v, b[k:]
		case tagBool:
			if len(b) == 0 {
				return nil, errCorrupt
			}
			it[name], b = b[0] == 1, b[1:]
		default:
			return nil, fmt.Errorf("%w: tag %d", errCorrupt, tag)
		}
		if err != nil {
			return nil, err
		}
	}
	return it, nil
}

// uvarint and varint are binary.Uvarint and binary.Varint on a string.
func uvarint(b string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(b); i++ {
		if i == binary.MaxVarintLen64 {
			return 0, -(i + 1) // overflow
		}
		c := b[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -(i + 1) // overflow
			}
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

func varint(b string) (int64, int) {
	ux, n := uvarint(b)
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, n
}

func readUvarint(b string) (uint64, string, error) {
	v, k := uvarint(b)
	if k <= 0 {
		return 0, "", errCorrupt
	}
	return v, b[k:], nil
}

func readString(b string) (string, string, error) {
	n, b, err := readUvarint(b)
	if err != nil {
		return "", "", err
	}
	if uint64(len(b)) < n {
		return "", "", errCorrupt
	}
	return b[:n], b[n:], nil
}
