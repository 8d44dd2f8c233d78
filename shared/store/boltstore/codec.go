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
// inside their transaction.
func decodeItem(b []byte) (store.Item, error) {
	n, b, err := readUvarint(b)
	if err != nil {
		return nil, err
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
			v, k := binary.Varint(b)
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

func readUvarint(b []byte) (uint64, []byte, error) {
	v, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, errCorrupt
	}
	return v, b[k:], nil
}

func readString(b []byte) (string, []byte, error) {
	n, b, err := readUvarint(b)
	if err != nil {
		return "", nil, err
	}
	if uint64(len(b)) < n {
		return "", nil, errCorrupt
	}
	return string(b[:n]), b[n:], nil
}
