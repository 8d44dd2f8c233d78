package dynamostore_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/dynamostore"
)

// The audit rollup reads the table's stream: it must carry every committed
// write, after a cancelled transaction as before it, and nothing of the
// cancelled one. (moto, as it comes, breaks both: .ci/with-moto corrects it.)
func TestTheStreamCarriesEveryCommittedWriteAndNoneOfACancelledTransaction(t *testing.T) {
	env := awstest.Env(t)
	db, table := awstest.Table(t, env)
	ctx := awstest.Context(t)
	if err := dynamostore.EnableStream(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		t.Fatal(err)
	}
	streams := env.DynamoDBStreams()
	arn := desc.Table.LatestStreamArn
	stream, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	if len(stream.StreamDescription.Shards) != 1 {
		t.Fatalf("%d shards; the test reads one", len(stream.StreamDescription.Shards))
	}
	it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: arn, ShardId: stream.StreamDescription.Shards[0].ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeLatest,
	})
	if err != nil {
		t.Fatal(err)
	}

	s := dynamostore.New(db, table)
	key := func(sk string) store.Key { return store.Key{PK: "p", SK: sk} }
	if err := s.Put(ctx, store.NewItem(key("before"))); err != nil {
		t.Fatal(err)
	}
	err = s.Transact(ctx, []store.Op{
		store.PutOp(store.NewItem(key("cancelled"))),
		store.PutOp(store.NewItem(key("before")), store.NotExists()),
	})
	if tx := (*store.TxError)(nil); !errors.As(err, &tx) {
		t.Fatalf("the transaction: %v; want it cancelled by its condition", err)
	}
	if err := s.Transact(ctx, []store.Op{store.PutOp(store.NewItem(key("after")))}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, store.NewItem(key("last"))); err != nil {
		t.Fatal(err)
	}

	var got []string
	iterator := it.ShardIterator
	for range 5 {
		out, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iterator})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Records {
			sk, _ := r.Dynamodb.Keys[store.AttrSK].(*streamtypes.AttributeValueMemberS)
			if sk == nil {
				t.Fatalf("a record without its sort key: %v", r.Dynamodb.Keys)
			}
			got = append(got, string(r.EventName)+" "+sk.Value)
		}
		if iterator = out.NextShardIterator; iterator == nil {
			break
		}
	}
	want := []string{"INSERT before", "INSERT after", "INSERT last"}
	if !slices.Equal(got, want) {
		t.Fatalf("stream records %q; want %q", got, want)
	}
}
