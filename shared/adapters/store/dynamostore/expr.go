package dynamostore

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"platformapi/shared/adapters/store"
)

// Expiry in expressions: an item is expired when 1 <= expiresAt <= now.
// BETWEEN is false on a missing attribute, so NOT expired holds for items
// that never expire, exactly like store.Item.Expired.
func expired(now int64) expression.ConditionBuilder {
	return expression.Name(store.AttrExpiresAt).Between(expression.Value(toAV(int64(1))), expression.Value(toAV(now)))
}

func live(now int64) expression.ConditionBuilder {
	return expression.Name(store.AttrPK).AttributeExists().And(expression.Not(expired(now)))
}

// condition translates the port's conditions so that DynamoDB treats an
// expired item as absent, since TTL deletion may lag by days (and moto never
// deletes). extra conditions are ANDed in; nil means nothing to check.
func condition(conds []store.Cond, now int64, extra ...expression.ConditionBuilder) *expression.ConditionBuilder {
	var all []expression.ConditionBuilder
	for _, c := range conds {
		all = append(all, condOne(c, now))
	}
	all = append(all, extra...)
	switch len(all) {
	case 0:
		return nil
	case 1:
		return &all[0]
	}
	c := all[0].And(all[1], all[2:]...)
	return &c
}

func condOne(c store.Cond, now int64) expression.ConditionBuilder {
	attr := expression.Name(c.Attr)
	switch c.Kind {
	case store.CondExists:
		return live(now)
	case store.CondNotExists:
		return expression.Name(store.AttrPK).AttributeNotExists().Or(expired(now))
	case store.CondAttrEquals:
		return live(now).And(attr.Equal(expression.Value(toAV(c.Value))))
	case store.CondAttrNotExist:
		return attr.AttributeNotExists().Or(expired(now))
	case store.CondNumBelow, store.CondFence:
		n := c.Value.(int64)
		return numeric(attr.LessThan(expression.Value(toAV(n))), attr, 0 < n, now)
	default: // store.CondNumAtLeast; checkConds refused anything else
		n := c.Value.(int64)
		return numeric(attr.GreaterThanEqual(expression.Value(toAV(n))), attr, 0 >= n, now)
	}
}

// numeric completes a comparison with the port's rule that a missing
// attribute, on an absent or expired item too, reads as 0: zeroHolds says
// whether the comparison holds for 0.
func numeric(cmp expression.ConditionBuilder, attr expression.NameBuilder, zeroHolds bool, now int64) expression.ConditionBuilder {
	if zeroHolds {
		return attr.AttributeNotExists().Or(cmp, expired(now))
	}
	return expression.Not(expired(now)).And(cmp)
}

// update translates u; nil for an empty update, which the expression builder
// cannot express (UpdateItem then only creates the key).
func update(u store.Update) *expression.UpdateBuilder {
	if len(u.Set)+len(u.Add)+len(u.Remove) == 0 {
		return nil
	}
	var b expression.UpdateBuilder
	for name, v := range u.Set {
		b = b.Set(expression.Name(name), expression.Value(toAV(v)))
	}
	for name, d := range u.Add {
		b = b.Add(expression.Name(name), expression.Value(toAV(d)))
	}
	for _, name := range u.Remove {
		b = b.Remove(expression.Name(name))
	}
	return &b
}

// compiled is a built expression with the parts DynamoDB requests take.
type compiled struct {
	expression.Expression
	hasCond, hasUpdate bool
}

// compile builds whichever of cond and upd is not nil.
func compile(cond *expression.ConditionBuilder, upd *expression.UpdateBuilder) (compiled, error) {
	if cond == nil && upd == nil {
		return compiled{}, nil
	}
	b := expression.NewBuilder()
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	if upd != nil {
		b = b.WithUpdate(*upd)
	}
	e, err := b.Build()
	if err != nil {
		return compiled{}, fmt.Errorf("dynamostore: build expression: %w", err)
	}
	return compiled{Expression: e, hasCond: cond != nil, hasUpdate: upd != nil}, nil
}

func (c compiled) condition() *string {
	if !c.hasCond {
		return nil
	}
	return c.Condition()
}

func (c compiled) update() *string {
	if !c.hasUpdate {
		return nil
	}
	return c.Update()
}
