package dynamostore

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/awserr"
)

// unavailableCodes are the answers of a DynamoDB that sheds load or fails on
// its side: the request had no effect and may be retried later.
var unavailableCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
	"InternalServerError":                    true,
	"InternalFailure":                        true,
	"ServiceUnavailable":                     true,
	"TransactionInProgressException":         true,
	"LimitExceededException":                 true,
}

// classify maps an SDK error onto the port's errors, keeping the cause
// wrapped so logs still show what DynamoDB said.
func classify(op string, err error) error {
	var ccf *types.ConditionalCheckFailedException
	switch {
	case awserr.Canceled(err):
		return fmt.Errorf("dynamostore: %s: %w", op, err)
	case errors.As(err, &ccf):
		return fmt.Errorf("dynamostore: %s: %w", op, store.ErrConditionFailed)
	case awserr.Transient(err, unavailableCodes):
		return unavailable(op, err)
	}
	return fmt.Errorf("dynamostore: %s: %w", op, err)
}

func unavailable(op string, err error) error {
	return fmt.Errorf("dynamostore: %s: %w: %w", op, store.ErrUnavailable, err)
}
