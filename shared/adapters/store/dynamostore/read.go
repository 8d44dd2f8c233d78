package dynamostore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/internal/itemrules"
)

// BatchGet reads up to 100 keys in one BatchGetItem, then retries the keys
// DynamoDB left unprocessed (it does so under load) with a short backoff.
func (s *Store) BatchGet(ctx context.Context, keys []store.Key) (map[string]store.Item, error) {
	if len(keys) > 100 {
		return nil, itemrules.Invalid("BatchGet takes at most 100 keys, got %d", len(keys))
	}
	out := make(map[string]store.Item, len(keys))
	seen := make(map[store.Key]bool, len(keys))
	var recs []map[string]types.AttributeValue
	for _, k := range keys {
		if err := itemrules.CheckKey(k); err != nil {
			return nil, err
		}
		if !seen[k] { // DynamoDB refuses a key named twice
			seen[k] = true
			recs = append(recs, keyRecord(k))
		}
	}
	pending := map[string]types.KeysAndAttributes{}
	if len(recs) > 0 {
		pending[s.table] = types.KeysAndAttributes{Keys: recs, ConsistentRead: aws.Bool(true)}
	}
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt == maxRaces {
			return nil, unavailable("BatchGetItem", errors.New("keys still unprocessed"))
		}
		if attempt > 0 {
			if err := sleep(ctx, time.Duration(25<<attempt)*time.Millisecond); err != nil {
				return nil, err
			}
		}
		res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		if err != nil {
			return nil, classify("BatchGetItem", err)
		}
		now := s.unix()
		for _, rec := range res.Responses[s.table] {
			it, err := fromRecord(rec)
			if err != nil {
				return nil, err
			}
			if !it.Expired(now) {
				out[it.Key().String()] = it
			}
		}
		pending = res.UnprocessedKeys
	}
	return out, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Query pages through DynamoDB until it has Limit live items plus one (to
// know whether there are more): DynamoDB applies its Limit before the
// expiry filter, so one request may return fewer live items than asked.
func (s *Store) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if q.PK == "" || q.Limit < 0 {
		return store.Page{}, itemrules.Invalid("query needs a pk and a non-negative limit")
	}
	start, empty := startKey(q)
	if empty {
		return store.Page{}, nil
	}
	now := s.unix()
	kc := expression.Key(store.AttrPK).Equal(expression.Value(toAV(q.PK)))
	if q.Prefix != "" {
		kc = kc.And(expression.Key(store.AttrSK).BeginsWith(q.Prefix))
	}
	e, err := expression.NewBuilder().WithKeyCondition(kc).WithFilter(expression.Not(expired(now))).Build()
	if err != nil {
		return store.Page{}, err
	}
	var page store.Page
	for {
		in := &dynamodb.QueryInput{
			TableName: &s.table, ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    e.KeyCondition(),
			FilterExpression:          e.Filter(),
			ExpressionAttributeNames:  e.Names(),
			ExpressionAttributeValues: e.Values(),
			ScanIndexForward:          aws.Bool(!q.Reverse),
			ExclusiveStartKey:         start,
		}
		if q.Limit > 0 {
			in.Limit = aws.Int32(int32(q.Limit + 1 - len(page.Items)))
		}
		res, err := s.db.Query(ctx, in)
		if err != nil {
			return store.Page{}, classify("Query", err)
		}
		for _, rec := range res.Items {
			it, err := fromRecord(rec)
			if err != nil {
				return store.Page{}, err
			}
			if q.Limit > 0 && len(page.Items) == q.Limit {
				page.More = true
				return page, nil
			}
			page.Items = append(page.Items, it)
		}
		if res.LastEvaluatedKey == nil {
			return page, nil
		}
		start = res.LastEvaluatedKey
	}
}

// startKey turns After into an ExclusiveStartKey. DynamoDB refuses a start
// key outside the key condition, so an After outside the prefix's range
// either drops out (every match lies beyond it) or empties the result.
func startKey(q store.Query) (key map[string]types.AttributeValue, empty bool) {
	if q.After == "" {
		return nil, false
	}
	if q.Prefix != "" && !strings.HasPrefix(q.After, q.Prefix) {
		below := q.After < q.Prefix
		if below != q.Reverse {
			return nil, false
		}
		return nil, true
	}
	return keyRecord(store.Key{PK: q.PK, SK: q.After}), false
}
