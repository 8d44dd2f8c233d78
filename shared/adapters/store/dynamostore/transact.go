package dynamostore

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/internal/itemrules"
)

// Transact runs TransactWriteItems. An update of an expired item cannot be
// an UpdateItem (the stale attributes would survive), and DynamoDB allows one
// action per item, so such a member is first sent as "update, if not
// expired"; when that is what cancelled the transaction, it is resent as a
// put of the fresh item, conditioned on the old one still being expired.
// Conflicts with concurrent transactions are retried a few times.
func (s *Store) Transact(ctx context.Context, ops []store.Op) error {
	if err := itemrules.CheckOps(ops); err != nil {
		return err
	}
	if SentAlone(ops) {
		return s.single(ctx, ops[0])
	}
	fresh := make([]store.Item, len(ops)) // non-nil: replace an expired item
	for race := 0; race < maxRaces; race++ {
		now := s.unix()
		items, err := transactItems(s.table, ops, fresh, now)
		if err != nil {
			return err
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return nil
		}
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			return classify("TransactWriteItems", err)
		}
		i, code := firstReason(tce.CancellationReasons)
		switch {
		case code == "TransactionConflict":
			if err := sleep(ctx, time.Duration(10<<race)*time.Millisecond); err != nil {
				return err
			}
			continue
		case code != "ConditionalCheckFailed":
			return classify("TransactWriteItems", err)
		}
		op := ops[i]
		if op.Kind != store.OpUpdate {
			return &store.TxError{Index: i}
		}
		cur, err := s.getRaw(ctx, op.Key)
		if err != nil {
			return err
		}
		now = s.unix()
		switch {
		case cur != nil && cur.Expired(now):
			if !itemrules.Holds(op.Conds, nil) {
				return &store.TxError{Index: i}
			}
			if fresh[i], err = itemrules.Apply(op.Key, nil, op.Update); err != nil {
				return err
			}
		case fresh[i] != nil || itemrules.Holds(op.Conds, cur):
			fresh[i] = nil // the item changed under us: try again as an update
		default:
			return &store.TxError{Index: i}
		}
	}
	return unavailable("TransactWriteItems", errors.New("lost too many races"))
}

// nopAttr is never written; see transactItems.
const nopAttr = "_nop"

// firstReason returns the first member that did not pass and why.
func firstReason(reasons []types.CancellationReason) (int, string) {
	for i, r := range reasons {
		if r.Code != nil && *r.Code != "None" {
			return i, *r.Code
		}
	}
	return 0, ""
}

func transactItems(table string, ops []store.Op, fresh []store.Item, now int64) ([]types.TransactWriteItem, error) {
	items := make([]types.TransactWriteItem, len(ops))
	for i, op := range ops {
		var cond *expression.ConditionBuilder
		var upd *expression.UpdateBuilder
		switch {
		case fresh[i] != nil:
			cond = condition(nil, now, expired(now))
		case op.Kind == store.OpUpdate:
			cond, upd = condition(op.Conds, now, expression.Not(expired(now))), update(op.Update)
			if upd == nil {
				// A transactional update needs an expression; removing an
				// attribute nobody writes still creates an absent item.
				nop := expression.Remove(expression.Name(nopAttr))
				upd = &nop
			}
		default:
			cond = condition(op.Conds, now)
		}
		e, err := compile(cond, upd)
		if err != nil {
			return nil, err
		}
		names, values := e.Names(), e.Values()
		switch {
		case fresh[i] != nil:
			items[i].Put = &types.Put{TableName: &table, Item: toRecord(fresh[i]),
				ConditionExpression: e.condition(), ExpressionAttributeNames: names, ExpressionAttributeValues: values}
		case op.Kind == store.OpPut:
			items[i].Put = &types.Put{TableName: &table, Item: toRecord(op.Item),
				ConditionExpression: e.condition(), ExpressionAttributeNames: names, ExpressionAttributeValues: values}
		case op.Kind == store.OpUpdate:
			items[i].Update = &types.Update{TableName: &table, Key: keyRecord(op.Key), UpdateExpression: e.update(),
				ConditionExpression: e.condition(), ExpressionAttributeNames: names, ExpressionAttributeValues: values}
		case op.Kind == store.OpDelete:
			items[i].Delete = &types.Delete{TableName: &table, Key: keyRecord(op.Key),
				ConditionExpression: e.condition(), ExpressionAttributeNames: names, ExpressionAttributeValues: values}
		default:
			items[i].ConditionCheck = &types.ConditionCheck{TableName: &table, Key: keyRecord(op.Key),
				ConditionExpression: e.condition(), ExpressionAttributeNames: names, ExpressionAttributeValues: values}
		}
	}
	return items, nil
}

// SentAlone reports whether Transact sends ops as one plain conditional
// write: the same all-or-nothing at half the write units (TransactWriteItems
// bills two per item). Not an increment (Add): the SDK resends a call whose
// answer was lost after DynamoDB applied it, which would count it twice,
// where TransactWriteItems' client request token makes the resend a no-op.
// An increment that must cost one unit carries a fence and goes to Update
// instead, which recognises the resend (see Store.Update).
func SentAlone(ops []store.Op) bool {
	return len(ops) == 1 && ops[0].Kind != store.OpCheck && len(ops[0].Update.Add) == 0
}

func (s *Store) single(ctx context.Context, op store.Op) error {
	var err error
	switch op.Kind {
	case store.OpPut:
		err = s.Put(ctx, op.Item, op.Conds...)
	case store.OpUpdate:
		_, err = s.Update(ctx, op.Key, op.Update, op.Conds...)
	default:
		err = s.Delete(ctx, op.Key, op.Conds...)
	}
	if errors.Is(err, store.ErrConditionFailed) {
		return &store.TxError{Index: 0}
	}
	return err
}
