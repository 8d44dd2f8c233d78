package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/store"
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
