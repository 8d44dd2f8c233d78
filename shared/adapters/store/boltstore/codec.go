package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"platformapi/shared/adapters/store"
)

// Keys are laid out as uvarint(len(pk)) ‖ pk ‖ sk. The length prefix keeps
// partitions apart (pk "a" never sees pk "ab") while bbolt's byte order
// sorts the sort keys of one partition exactly as DynamoDB sorts S keys.
func partitionPrefix(pk string) []byte {
	return appendString(make([]byte, 0, binary.MaxVarintLen64+len(pk)), pk)
}

// encodeKey makes the key in one allocation: every write of an item
// encodes one, which bbolt keeps until the commit.
func encodeKey(k store.Key) []byte {
	return appendKey(make([]byte, 0, binary.MaxVarintLen64+len(k.PK)+len(k.SK)), k)
}

// appendKey appends k's encoding to dst: a read seeks with it and keeps
// nothing, so a batch reuses one buffer for all its keys.
func appendKey(dst []byte, k store.Key) []byte {
	return append(appendString(dst, k.PK), k.SK...)
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

// encodeItem serialises an item whose values were already validated, into
// one buffer of the size it needs (growing it as it goes reallocated an
// audit event's item seven times).
func encodeItem(it store.Item) []byte {
	size := binary.MaxVarintLen64
	for name, v := range it {
		size += 2*binary.MaxVarintLen64 + 1 + len(name)
		switch v := v.(type) {
		case string:
			size += len(v)
		case []byte:
			size += len(v)
		}
	}
	b := binary.AppendUvarint(make([]byte, 0, size), uint64(len(it)))
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
			b = appendBytes(append(b, tagBytes), v)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendBytes is appendString of a []byte, without the copy a string
// conversion makes (an audit event's item is a kilobyte of document).
func appendBytes(b []byte, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

var errCorrupt = errors.New("boltstore: corrupt item encoding")

// decodeItem copies everything out of raw: bbolt's value slices are only
// valid inside their transaction. The copy is one buffer: every name and
// string value is a string over a part of it, every []byte value the
// (capacity-bounded) part of it that holds its bytes, so that reading an
// item costs one allocation for its contents instead of one or two per
// attribute (the hot path reads a key chain and an account, each key a
// kilobyte of document, on every request). The parts never overlap: writing
// into a []byte value changes no other value, and nothing else ever writes
// to the buffer.
func decodeItem(raw []byte) (store.Item, error) {
	buf := bytes.Clone(raw)
	n, rest, err := readUvarint(buf)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(rest)) {
		return nil, errCorrupt
	}
	it := make(store.Item, n)
	for range n {
		var name, v []byte
		if name, rest, err = readString(rest); err != nil {
			return nil, err
		}
		if len(rest) == 0 {
			return nil, errCorrupt
		}
		tag := rest[0]
		rest = rest[1:]
		switch tag {
		case tagString:
			v, rest, err = readString(rest)
			it[asString(name)] = asString(v)
		case tagBytes:
			v, rest, err = readString(rest)
			it[asString(name)] = v[:len(v):len(v)]
		case tagInt:
			x, k := binary.Varint(rest)
			if k <= 0 {
				return nil, errCorrupt
			}
			it[asString(name)], rest = x, rest[k:]
		case tagBool:
			if len(rest) == 0 {
				return nil, errCorrupt
			}
			it[asString(name)], rest = rest[0] == 1, rest[1:]
		default:
			return nil, fmt.Errorf("%w: tag %d", errCorrupt, tag)
		}
		if err != nil {
			return nil, err
		}
	}
	return it, nil
}

// asString views b as a string without a copy; see decodeItem for why the
// bytes never change afterwards.
func asString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func readUvarint(b []byte) (uint64, []byte, error) {
	v, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, errCorrupt
	}
	return v, b[k:], nil
}

func readString(b []byte) ([]byte, []byte, error) {
	n, b, err := readUvarint(b)
	if err != nil {
		return nil, nil, err
	}
	if uint64(len(b)) < n {
		return nil, nil, errCorrupt
	}
	return b[:n], b[n:], nil
}
