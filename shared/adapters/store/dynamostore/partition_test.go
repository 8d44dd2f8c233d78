package dynamostore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/dynamostore"
)

// A query reads its partition, as DynamoDB's does: it takes as long in a
// table whose other partitions hold thousands of items as in an empty one.
// Readers that query many partitions (an audit list reads 16 a day of its
// range) rely on it to answer within their function's timeout. (moto, as
// it comes, sorts the whole table for each query: .ci/with-moto corrects
// it.)
func TestAQueryCostsItsPartitionNotTheTable(t *testing.T) {
	env := awstest.Env(t)
	db, table := awstest.Table(t, env)
	ctx := awstest.Context(t)
	s := dynamostore.New(db, table)
	for _, sk := range []string{"a", "b", "c"} {
		if err := s.Put(ctx, store.NewItem(store.Key{PK: "mine", SK: sk})); err != nil {
			t.Fatal(err)
		}
	}
	fastest := func() time.Duration {
		best := time.Hour
		for range 7 {
			began := time.Now()
			page, err := s.Query(ctx, store.Query{PK: "mine", After: "c", Limit: 2, Reverse: true})
			if took := time.Since(began); took < best {
				best = took
			}
			if err != nil || len(page.Items) != 2 || page.Items[0].Key().SK != "b" {
				t.Fatalf("query: %v %v", page, err)
			}
		}
		return best
	}
	alone := fastest()
	const others = 4000
	for i := 0; i < others; i += 25 {
		var puts []types.WriteRequest
		for j := i; j < i+25; j++ {
			puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				store.AttrPK: &types.AttributeValueMemberS{Value: fmt.Sprintf("other#%d", j%400)},
				store.AttrSK: &types.AttributeValueMemberS{Value: fmt.Sprintf("%06d", j)},
			}}})
		}
		if _, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: puts}}); err != nil {
			t.Fatal(err)
		}
	}
	crowded := fastest()
	t.Logf("a query of 3 items: %v alone in the table, %v beside %d others", alone, crowded, others)
	if crowded > 3*alone+10*time.Millisecond {
		t.Errorf("a query of 3 items took %v beside %d items of other partitions, %v alone: it reads the table, not its partition", crowded, others, alone)
	}
}
