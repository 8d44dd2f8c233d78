// Package dynamostore is the DynamoDB adapter of the item-store port: one
// table with string keys pk and sk and a TTL attribute expiresAt. Every read
// is strongly consistent, and every read and condition treats an expired
// item as absent, because DynamoDB deletes expired items only eventually (and
// moto never does). It must never return an expired item, nor let an expired
// item's attributes leak into the fresh item an Update creates in its place.
//
// Table design: one table, on-demand capacity, no secondary indexes.
//
//	pk        S  partition key  (store.AttrPK)
//	sk        S  sort key       (store.AttrSK)
//	expiresAt N  TTL attribute  (store.AttrExpiresAt, unix seconds; absent or 0: never)
//	others    S, N (int64), BOOL or B, as the port's value types
//
// Every access is by key (GetItem, BatchGetItem, PutItem, UpdateItem,
// DeleteItem, TransactWriteItems) or a Query of one partition in sort-key
// order, optionally narrowed by a sort-key prefix (begins_with) and resumed
// after a sort key (ExclusiveStartKey); which domain record lives under which
// pk and sk is the domain's to document.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/internal/itemrules"
)

var _ store.Store = (*Store)(nil)

// maxRaces bounds how often one call starts over after losing a race with a
// concurrent writer (an expired item replaced, a transaction conflict). Past
// it the store answers ErrUnavailable rather than spin.
const maxRaces = 5

// Store is a store.Store on one DynamoDB table. It is safe for concurrent use.
type Store struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time
}

// Option configures New.
type Option func(*Store)

// WithClock replaces time.Now as the judge of expiry.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// New returns a store on an existing table (see CreateTable).
func New(client *dynamodb.Client, table string, opts ...Option) *Store {
	s := &Store{db: client, table: table, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Close does nothing: the SDK client belongs to the caller.
func (s *Store) Close() error { return nil }

func (s *Store) unix() int64 { return s.now().Unix() }

// getRaw reads the stored item, expired or not; nil when there is none.
func (s *Store) getRaw(ctx context.Context, k store.Key) (store.Item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: keyRecord(k), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, classify("GetItem", err)
	}
	if out.Item == nil {
		return nil, nil
	}
	return fromRecord(out.Item)
}

func (s *Store) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if err := itemrules.CheckKey(k); err != nil {
		return nil, err
	}
	it, err := s.getRaw(ctx, k)
	if err != nil {
		return nil, err
	}
	if it == nil || it.Expired(s.unix()) {
		return nil, fmt.Errorf("%w: %s", store.ErrNotFound, k)
	}
	return it, nil
}

func (s *Store) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	if err := errors.Join(itemrules.CheckItem(it), itemrules.CheckConds(conds)); err != nil {
		return err
	}
	e, err := compile(condition(conds, s.unix()), nil)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: toRecord(it),
		ConditionExpression:       e.condition(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
	})
	if err != nil {
		return classify("PutItem", err)
	}
	return nil
}

func (s *Store) Delete(ctx context.Context, k store.Key, conds ...store.Cond) error {
	if err := errors.Join(itemrules.CheckKey(k), itemrules.CheckConds(conds)); err != nil {
		return err
	}
	e, err := compile(condition(conds, s.unix()), nil)
	if err != nil {
		return err
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.table, Key: keyRecord(k),
		ConditionExpression:       e.condition(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
	})
	if err != nil {
		return classify("DeleteItem", err)
	}
	return nil
}

// Update first tries UpdateItem on the condition that the item is not
// expired, which is the one-round-trip path for live and absent items. When
// that fails, the item it was checked against (returned with the failure,
// so no second read) tells an expired item (replaced by a fresh item with a
// PutItem conditioned on it still being expired) from a condition that
// really failed.
//
// A fenced update (store.Fence) that fails on finding its own fence value
// was already applied, by an earlier attempt of this very call that the SDK
// resent: Update answers it as applied.
func (s *Store) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	if err := errors.Join(itemrules.CheckKey(k), itemrules.CheckUpdate(u), itemrules.CheckConds(conds)); err != nil {
		return nil, err
	}
	for range maxRaces {
		it, cur, err := s.updateLive(ctx, k, u, conds)
		if !errors.Is(err, store.ErrConditionFailed) {
			return it, err
		}
		now := s.unix()
		if cur == nil || !cur.Expired(now) {
			if itemrules.AppliedFence(u, conds, cur) {
				return cur, nil
			}
			if itemrules.Holds(conds, cur) {
				continue // a failure that showed no item it failed on: send again
			}
			return nil, fmt.Errorf("%w: update %s", store.ErrConditionFailed, k)
		}
		if !itemrules.Holds(conds, nil) {
			return nil, fmt.Errorf("%w: update %s", store.ErrConditionFailed, k)
		}
		fresh, err := itemrules.Apply(k, nil, u)
		if err != nil {
			return nil, err
		}
		err = s.replaceExpired(ctx, fresh, now)
		if !errors.Is(err, store.ErrConditionFailed) {
			if err != nil {
				return nil, err
			}
			return fresh, nil
		}
	}
	return nil, unavailable("UpdateItem", errors.New("lost the race for an expired item too often"))
}

// updateLive sends one UpdateItem. When its condition fails, cur is the item
// it was checked against, expired or not (nil: none).
func (s *Store) updateLive(ctx context.Context, k store.Key, u store.Update, conds []store.Cond) (it, cur store.Item, err error) {
	now := s.unix()
	e, err := compile(condition(conds, now, expression.Not(expired(now))), update(u))
	if err != nil {
		return nil, nil, err
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: keyRecord(k),
		ConditionExpression:                 e.condition(),
		UpdateExpression:                    e.update(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if ccf.Item != nil {
			if cur, err = fromRecord(ccf.Item); err != nil {
				return nil, nil, err
			}
		}
		return nil, cur, fmt.Errorf("dynamostore: UpdateItem: %w", store.ErrConditionFailed)
	}
	if err != nil {
		return nil, nil, classify("UpdateItem", err)
	}
	it, err = fromRecord(out.Attributes)
	return it, nil, err
}

// replaceExpired overwrites an item only while it is still expired at now.
func (s *Store) replaceExpired(ctx context.Context, fresh store.Item, now int64) error {
	e, err := compile(condition(nil, now, expired(now)), nil)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: toRecord(fresh),
		ConditionExpression:       e.condition(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
	})
	if err != nil {
		return classify("PutItem", err)
	}
	return nil
}
