package sqsqueue

import (
	"context"
	"errors"
	"fmt"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"platformapi/shared/queue"
)

// classify maps an SDK error onto the queue port's errors, keeping the cause.
func classify(op string, err error) error {
	var api smithy.APIError
	var resp *awshttp.ResponseError
	var send *smithyhttp.RequestSendError
	code := ""
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	var kind error
	switch {
	case errors.Is(err, context.Canceled):
	case code == "ReceiptHandleIsInvalid", code == "MessageNotInflight",
		code == "AWS.SimpleQueueService.MessageNotInflight", code == "InvalidReceiptHandle":
		kind = queue.ErrInvalidReceipt
	case code == "ThrottlingException", code == "RequestThrottled", code == "KmsThrottled",
		code == "ServiceUnavailable", code == "InternalFailure", code == "InternalError",
		errors.As(err, &resp) && resp.HTTPStatusCode() >= 500,
		errors.As(err, &send),
		errors.Is(err, context.DeadlineExceeded):
		kind = queue.ErrUnavailable
	}
	if kind == nil {
		return fmt.Errorf("sqsqueue: %s: %w", op, err)
	}
	return fmt.Errorf("sqsqueue: %s: %w: %w", op, kind, err)
}
