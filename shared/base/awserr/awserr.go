// Package awserr reads AWS SDK errors the same way for every adapter: the
// service's error code, and whether the failure was on the service's side
// or on the way to it (throttling, a 5xx, a send failure, a deadline), so
// that the request had no effect and may be retried later. Each adapter
// adds only its service's own codes.
package awserr

import (
	"context"
	"errors"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Code is the service's error code, or "".
func Code(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// Canceled reports a caller that gave up: not the service's fault.
func Canceled(err error) bool { return errors.Is(err, context.Canceled) }

// Transient reports a failure on the service's side or on the way to it:
// one of the service's own load or outage codes, any 5xx, a request that
// could not be sent, or a deadline.
func Transient(err error, serviceCodes map[string]bool) bool {
	var resp *awshttp.ResponseError
	var send *smithyhttp.RequestSendError
	return serviceCodes[Code(err)] ||
		errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 ||
		errors.As(err, &send) ||
		errors.Is(err, context.DeadlineExceeded)
}
