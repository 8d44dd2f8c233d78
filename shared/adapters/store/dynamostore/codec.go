package dynamostore

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/adapters/store"
)

// toAV maps a validated port value onto DynamoDB's type of the same meaning.
func toAV(v any) types.AttributeValue {
	switch v := v.(type) {
	case string:
		return &types.AttributeValueMemberS{Value: v}
	case int64:
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	case bool:
		return &types.AttributeValueMemberBOOL{Value: v}
	case []byte:
		return &types.AttributeValueMemberB{Value: v}
	}
	panic(fmt.Sprintf("dynamostore: unvalidated value of type %T", v))
}

func toRecord(it store.Item) map[string]types.AttributeValue {
	rec := make(map[string]types.AttributeValue, len(it))
	for name, v := range it {
		rec[name] = toAV(v)
	}
	return rec
}

func keyRecord(k store.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		store.AttrPK: &types.AttributeValueMemberS{Value: k.PK},
		store.AttrSK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

// fromRecord refuses types this adapter never writes: they mean someone else
// wrote to the table, and guessing a conversion would hide it.
func fromRecord(rec map[string]types.AttributeValue) (store.Item, error) {
	it := make(store.Item, len(rec))
	for name, av := range rec {
		switch av := av.(type) {
		case *types.AttributeValueMemberS:
			it[name] = av.Value
		case *types.AttributeValueMemberN:
			n, err := strconv.ParseInt(av.Value, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("dynamostore: attribute %q: %w", name, err)
			}
			it[name] = n
		case *types.AttributeValueMemberBOOL:
			it[name] = av.Value
		case *types.AttributeValueMemberB:
			it[name] = append([]byte{}, av.Value...)
		default:
			return nil, fmt.Errorf("dynamostore: attribute %q has unsupported type %T", name, av)
		}
	}
	return it, nil
}
