package dynamostore

import (
	"bytes"
	"errors"
	"fmt"

	"platformapi/shared/store"
)

// errInvalid marks programming errors (bad types, key changes): they are never
// conditions failing and never worth a retry.
var errInvalid = errors.New("dynamostore: invalid request")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errInvalid}, args...)...)
}

func checkValue(name string, v any) error {
	switch v.(type) {
	case string, int64, bool, []byte:
	default:
		return invalid("attribute %q has unsupported type %T", name, v)
	}
	if name == store.AttrExpiresAt {
		if _, ok := v.(int64); !ok {
			return invalid("%s must be int64 unix seconds, got %T", name, v)
		}
	}
	return nil
}

func checkKey(k store.Key) error {
	if k.PK == "" || k.SK == "" {
		return invalid("key %q: pk and sk must be non-empty", k)
	}
	return nil
}

func checkItem(it store.Item) error {
	pk, okp := it[store.AttrPK].(string)
	sk, oks := it[store.AttrSK].(string)
	if !okp || !oks {
		return invalid("item needs string %s and %s", store.AttrPK, store.AttrSK)
	}
	if err := checkKey(store.Key{PK: pk, SK: sk}); err != nil {
		return err
	}
	for name, v := range it {
		if err := checkValue(name, v); err != nil {
			return err
		}
	}
	return nil
}

// checkUpdate refuses what DynamoDB's UpdateItem refuses, so both adapters
// fail the same way: key changes and one attribute touched twice.
func checkUpdate(u store.Update) error {
	seen := map[string]bool{}
	touch := func(name string) error {
		if name == store.AttrPK || name == store.AttrSK {
			return invalid("update may not change key attribute %q", name)
		}
		if seen[name] {
			return invalid("update touches attribute %q twice", name)
		}
		seen[name] = true
		return nil
	}
	for name, v := range u.Set {
		if err := touch(name); err != nil {
			return err
		}
		if err := checkValue(name, v); err != nil {
			return err
		}
	}
	for name := range u.Add {
		if err := touch(name); err != nil {
			return err
		}
	}
	for _, name := range u.Remove {
		if err := touch(name); err != nil {
			return err
		}
	}
	return nil
}

func checkConds(conds []store.Cond) error {
	for _, c := range conds {
		switch c.Kind {
		case store.CondExists, store.CondNotExists, store.CondAttrNotExist:
		case store.CondAttrEquals:
			if err := checkValue(c.Attr, c.Value); err != nil {
				return err
			}
		case store.CondNumBelow, store.CondNumAtLeast:
			if _, ok := c.Value.(int64); !ok {
				return invalid("condition on %q needs an int64, got %T", c.Attr, c.Value)
			}
		default:
			return invalid("unknown condition kind %d", c.Kind)
		}
	}
	return nil
}

// holds evaluates ANDed conditions against the live item, nil when the item
// is absent or expired.
func holds(conds []store.Cond, it store.Item) bool {
	for _, c := range conds {
		if !holdsOne(c, it) {
			return false
		}
	}
	return true
}

func holdsOne(c store.Cond, it store.Item) bool {
	switch c.Kind {
	case store.CondNotExists:
		return it == nil
	case store.CondAttrNotExist:
		return it == nil || !it.Has(c.Attr)
	case store.CondNumBelow:
		n, ok := number(it, c.Attr)
		return ok && n < c.Value.(int64)
	case store.CondNumAtLeast:
		n, ok := number(it, c.Attr)
		return ok && n >= c.Value.(int64)
	}
	if it == nil {
		return false
	}
	switch c.Kind {
	case store.CondExists:
		return true
	case store.CondAttrEquals:
		v, ok := it[c.Attr]
		return ok && equal(v, c.Value)
	}
	return false
}

// number reads a counter, an absent attribute (or item) counting as 0; a non-numeric value fails the
// comparison, as it does in DynamoDB.
func number(it store.Item, name string) (int64, bool) {
	v, ok := it[name]
	if !ok {
		return 0, true
	}
	n, ok := v.(int64)
	return n, ok
}

func equal(a, b any) bool {
	if x, ok := a.([]byte); ok {
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return a == b
}

// apply returns the item after u, starting fresh from the key when cur is nil.
func apply(k store.Key, cur store.Item, u store.Update) (store.Item, error) {
	next := store.NewItem(k)
	for name, v := range cur {
		next[name] = v
	}
	for name, v := range u.Set {
		next[name] = cloneValue(v)
	}
	for name, d := range u.Add {
		n, ok := number(next, name)
		if !ok {
			return nil, invalid("cannot add to non-numeric attribute %q", name)
		}
		next[name] = n + d
	}
	for _, name := range u.Remove {
		delete(next, name)
	}
	return next, nil
}

func cloneValue(v any) any {
	if b, ok := v.([]byte); ok {
		return append([]byte{}, b...)
	}
	return v
}

func checkOps(ops []store.Op) error {
	if len(ops) == 0 || len(ops) > store.MaxTransactItems {
		return invalid("a transaction holds 1 to %d members, got %d", store.MaxTransactItems, len(ops))
	}
	seen := make(map[store.Key]bool, len(ops))
	for i, op := range ops {
		var err error
		switch op.Kind {
		case store.OpPut:
			err = checkItem(op.Item)
			if err == nil && op.Item.Key() != op.Key {
				err = invalid("member %d: put item key differs from op key", i)
			}
		case store.OpUpdate:
			err = errors.Join(checkKey(op.Key), checkUpdate(op.Update))
		case store.OpDelete:
			err = checkKey(op.Key)
		case store.OpCheck:
			err = checkKey(op.Key)
			if err == nil && len(op.Conds) == 0 {
				err = invalid("member %d: a check needs a condition", i)
			}
		default:
			err = invalid("member %d: unknown op kind %d", i, op.Kind)
		}
		if err = errors.Join(err, checkConds(op.Conds)); err != nil {
			return err
		}
		if seen[op.Key] {
			return invalid("member %d: key %s appears twice", i, op.Key)
		}
		seen[op.Key] = true
	}
	return nil
}
