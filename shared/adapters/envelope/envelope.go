// Package envelope is the key-management port: envelope encryption of small
// secrets at rest (connection credentials, wallet keys). A fresh data key
// encrypts each secret with AES-256-GCM; the data key itself is wrapped by a
// master key that never leaves its keeper (KMS, or a local master key file in
// embedded mode). Associated data binds a ciphertext to its owner so it cannot
// be moved to another record.
package envelope

import (
	"context"
	"errors"
)

var (
	// ErrDecrypt means the ciphertext, its wrapped key or its associated data
	// did not authenticate.
	ErrDecrypt     = errors.New("envelope: decryption failed")
	ErrUnavailable = errors.New("envelope: key service unavailable")
)

// Sealer encrypts and decrypts secrets.
type Sealer interface {
	Seal(ctx context.Context, plaintext, associated []byte) ([]byte, error)
	Open(ctx context.Context, sealed, associated []byte) ([]byte, error)
}
