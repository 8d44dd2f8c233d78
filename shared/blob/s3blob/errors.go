package s3blob

import (
	"context"
	"errors"
	"fmt"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"platformapi/shared/blob"
)

// classify maps an SDK error onto the blob port's errors, keeping the cause.
func classify(op, key string, err error) error {
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
	case code == "NoSuchKey", code == "NotFound":
		kind = blob.ErrNotFound
	case code == "PreconditionFailed", code == "ConditionalRequestConflict":
		kind = blob.ErrExists
	case code == "SlowDown", code == "ServiceUnavailable", code == "InternalError", code == "RequestTimeout",
		errors.As(err, &resp) && resp.HTTPStatusCode() >= 500,
		errors.As(err, &send),
		errors.Is(err, context.DeadlineExceeded):
		kind = blob.ErrUnavailable
	}
	if kind == nil {
		return fmt.Errorf("s3blob: %s %s: %w", op, key, err)
	}
	return fmt.Errorf("s3blob: %s %s: %w: %w", op, key, kind, err)
}
