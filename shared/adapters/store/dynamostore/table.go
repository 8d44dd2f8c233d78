package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/adapters/store"
)

// CreateTable creates the table this adapter expects, on demand billing with
// TTL on expiresAt, and waits until it is active. An existing table is left
// as it is. On real AWS the CDK stack owns the table; this serves LocalStack,
// moto and tests.
func CreateTable(ctx context.Context, client *dynamodb.Client, table string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   &table,
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(store.AttrPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(store.AttrSK), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(store.AttrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(store.AttrSK), KeyType: types.KeyTypeRange},
		},
	})
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dynamostore: create table %s: %w", table, err)
	}
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &table}, 2*time.Minute); err != nil {
		return fmt.Errorf("dynamostore: wait for table %s: %w", table, err)
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: &table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(store.AttrExpiresAt), Enabled: aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamostore: enable TTL on %s: %w", table, err)
	}
	return nil
}

// EnableStream turns on the table's stream of new images, as the CDK stack
// declares it: the audit rollup reads it. A table that already streams new
// images is left as it is; one that streams another view is refused, since
// the rollup needs every inserted item whole.
func EnableStream(ctx context.Context, client *dynamodb.Client, table string) error {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return fmt.Errorf("dynamostore: describe table %s: %w", table, err)
	}
	if spec := out.Table.StreamSpecification; spec != nil && aws.ToBool(spec.StreamEnabled) {
		if spec.StreamViewType != types.StreamViewTypeNewImage && spec.StreamViewType != types.StreamViewTypeNewAndOldImages {
			return fmt.Errorf("dynamostore: table %s streams %s, not its new images", table, spec.StreamViewType)
		}
		return nil
	}
	_, err = client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: &table,
		StreamSpecification: &types.StreamSpecification{
			StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage,
		},
	})
	if err != nil {
		return fmt.Errorf("dynamostore: enable the stream of %s: %w", table, err)
	}
	return nil
}
