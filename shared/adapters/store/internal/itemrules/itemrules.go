// Package itemrules is what every item-store adapter checks and computes
// the same way, so that the adapters fail and succeed alike: the port's
// value types, key and update rules, condition evaluation on a live item
// (nil when absent or expired), and the result of an update.
package itemrules

import (
	"bytes"
	"errors"
	"fmt"

	"platformapi/shared/adapters/store"
)

// ErrInvalid marks programming errors (bad types, key changes): they are never
// conditions failing and never worth a retry.
var ErrInvalid = errors.New("store: invalid request")

// Invalid is an ErrInvalid with details.
func Invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func CheckValue(name string, v any) error {
	switch v.(type) {
	case string, int64, bool, []byte:
	default:
		return Invalid("attribute %q has unsupported type %T", name, v)
	}
	if name == store.AttrExpiresAt {
		if _, ok := v.(int64); !ok {
			return Invalid("%s must be int64 unix seconds, got %T", name, v)
		}
	}
	return nil
}

func CheckKey(k store.Key) error {
	if k.PK == "" || k.SK == "" {
		return Invalid("key %q: pk and sk must be non-empty", k)
	}
	return nil
}

func CheckItem(it store.Item) error {
	pk, okp := it[store.AttrPK].(string)
	sk, oks := it[store.AttrSK].(string)
	if !okp || !oks {
		return Invalid("item needs string %s and %s", store.AttrPK, store.AttrSK)
	}
	if err := CheckKey(store.Key{PK: pk, SK: sk}); err != nil {
		return err
	}
	for name, v := range it {
		if err := CheckValue(name, v); err != nil {
			return err
		}
	}
	return nil
}

// CheckUpdate refuses what DynamoDB's UpdateItem refuses, so both adapters
// fail the same way: key changes and one attribute touched twice.
func CheckUpdate(u store.Update) error {
	seen := map[string]bool{}
	touch := func(name string) error {
		if name == store.AttrPK || name == store.AttrSK {
			return Invalid("update may not change key attribute %q", name)
		}
		if seen[name] {
			return Invalid("update touches attribute %q twice", name)
		}
		seen[name] = true
		return nil
	}
	for name, v := range u.Set {
		if err := touch(name); err != nil {
			return err
		}
		if err := CheckValue(name, v); err != nil {
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

func CheckConds(conds []store.Cond) error {
	for _, c := range conds {
		switch c.Kind {
		case store.CondExists, store.CondNotExists, store.CondAttrNotExist:
		case store.CondAttrEquals:
			if err := CheckValue(c.Attr, c.Value); err != nil {
				return err
			}
		case store.CondNumBelow, store.CondNumAtLeast, store.CondFence:
			if _, ok := c.Value.(int64); !ok {
				return Invalid("condition on %q needs an int64, got %T", c.Attr, c.Value)
			}
		default:
			return Invalid("unknown condition kind %d", c.Kind)
		}
	}
	return nil
}

// Holds evaluates ANDed conditions against the live item, nil when the item
// is absent or expired.
func Holds(conds []store.Cond, it store.Item) bool {
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
	case store.CondNumBelow, store.CondFence:
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

// Apply returns the item after u, starting fresh from the key when cur is nil.
func Apply(k store.Key, cur store.Item, u store.Update) (store.Item, error) {
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
			return nil, Invalid("cannot add to non-numeric attribute %q", name)
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

func CheckOps(ops []store.Op) error {
	if len(ops) == 0 || len(ops) > store.MaxTransactItems {
		return Invalid("a transaction Holds 1 to %d members, got %d", store.MaxTransactItems, len(ops))
	}
	seen := make(map[store.Key]bool, len(ops))
	for i, op := range ops {
		var err error
		switch op.Kind {
		case store.OpPut:
			err = CheckItem(op.Item)
			if err == nil && op.Item.Key() != op.Key {
				err = Invalid("member %d: put item key differs from op key", i)
			}
		case store.OpUpdate:
			err = errors.Join(CheckKey(op.Key), CheckUpdate(op.Update))
		case store.OpDelete:
			err = CheckKey(op.Key)
		case store.OpCheck:
			err = CheckKey(op.Key)
			if err == nil && len(op.Conds) == 0 {
				err = Invalid("member %d: a check needs a condition", i)
			}
		default:
			err = Invalid("member %d: unknown op kind %d", i, op.Kind)
		}
		if err = errors.Join(err, CheckConds(op.Conds)); err != nil {
			return err
		}
		if seen[op.Key] {
			return Invalid("member %d: key %s appears twice", i, op.Key)
		}
		seen[op.Key] = true
	}
	return nil
}

// AppliedFence reports whether cur, the live item an update's conditions
// failed on, shows that the update already applied: one of its conditions
// is a store.Fence whose attribute the update sets to the fence's value,
// and cur holds that value (store.Fence).
func AppliedFence(u store.Update, conds []store.Cond, cur store.Item) bool {
	for _, c := range conds {
		if c.Kind != store.CondFence || cur == nil || !cur.Has(c.Attr) {
			continue
		}
		if set, ok := u.Set[c.Attr].(int64); ok && set == c.Value.(int64) && cur.Int(c.Attr) == set {
			return true
		}
	}
	return false
}
