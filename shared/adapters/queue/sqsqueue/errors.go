package sqsqueue

import (
	"fmt"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/base/awserr"
)

// classify maps an SDK error onto the queue port's errors, keeping the cause.
func classify(op string, err error) error {
	code := awserr.Code(err)
	var kind error
	switch {
	case awserr.Canceled(err):
	case invalidReceiptCodes[code]:
		kind = queue.ErrInvalidReceipt
	case awserr.Transient(err, unavailableCodes):
		kind = queue.ErrUnavailable
	}
	if kind == nil {
		return fmt.Errorf("sqsqueue: %s: %w", op, err)
	}
	return fmt.Errorf("sqsqueue: %s: %w: %w", op, kind, err)
}

// invalidReceiptCodes say the message was deleted or handed to another
// receiver; unavailableCodes are SQS shedding load or failing.
var (
	invalidReceiptCodes = map[string]bool{
		"ReceiptHandleIsInvalid": true, "MessageNotInflight": true,
		"AWS.SimpleQueueService.MessageNotInflight": true, "InvalidReceiptHandle": true,
	}
	unavailableCodes = map[string]bool{
		"ThrottlingException": true, "RequestThrottled": true, "KmsThrottled": true,
		"ServiceUnavailable": true, "InternalFailure": true, "InternalError": true,
	}
)
