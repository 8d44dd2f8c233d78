package s3blob

import (
	"fmt"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/base/awserr"
)

// classify maps an SDK error onto the blob port's errors, keeping the cause.
func classify(op, key string, err error) error {
	code := awserr.Code(err)
	var kind error
	switch {
	case awserr.Canceled(err):
	case code == "NoSuchKey", code == "NotFound":
		kind = blob.ErrNotFound
	case code == "PreconditionFailed", code == "ConditionalRequestConflict":
		kind = blob.ErrExists
	case awserr.Transient(err, unavailableCodes):
		kind = blob.ErrUnavailable
	}
	if kind == nil {
		return fmt.Errorf("s3blob: %s %s: %w", op, key, err)
	}
	return fmt.Errorf("s3blob: %s %s: %w: %w", op, key, kind, err)
}

// unavailableCodes are S3 shedding load or failing on its side.
var unavailableCodes = map[string]bool{"SlowDown": true, "ServiceUnavailable": true, "InternalError": true, "RequestTimeout": true}
