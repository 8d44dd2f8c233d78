package kmsenvelope

import (
	"fmt"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/base/awserr"
)

// decryptCodes are Decrypt's ways of saying the wrapped key is not one made
// under our key and this context: to the caller, all mean the secret was
// altered or moved. A wrapped key names its KMS key inside it, so an altered
// one can name a key that does not exist or that we may not use; KMS then
// answers NotFound or AccessDenied (moto answers AccessDenied also for a
// blob of another key of ours). The cause stays wrapped for the logs.
var decryptCodes = map[string]bool{
	"InvalidCiphertextException": true,
	"IncorrectKeyException":      true,
	"NotFoundException":          true,
	"AccessDeniedException":      true,
}

var unavailableCodes = map[string]bool{
	"ThrottlingException":         true,
	"KMSInternalException":        true,
	"DependencyTimeoutException":  true,
	"KeyUnavailableException":     true,
	"LimitExceededException":      true,
	"InternalFailure":             true,
	"ServiceUnavailableException": true,
}

// classify maps an SDK error onto the envelope port's errors, keeping the
// cause.
func classify(op string, err error) error {
	var kind error
	switch {
	case awserr.Canceled(err):
	case op == "Decrypt" && decryptCodes[awserr.Code(err)]:
		kind = envelope.ErrDecrypt
	case awserr.Transient(err, unavailableCodes):
		kind = envelope.ErrUnavailable
	}
	if kind == nil {
		return fmt.Errorf("kmsenvelope: %s: %w", op, err)
	}
	return fmt.Errorf("kmsenvelope: %s: %w: %w", op, kind, err)
}
