// Package kmsenvelope is the KMS adapter of the envelope port: KMS
// GenerateDataKey gives a fresh AES-256 data key per secret (plaintext for us
// to encrypt with locally, wrapped for storage), and Decrypt unwraps it. The
// associated data binds both layers: its hash is the KMS encryption context
// and the data itself is the AES-GCM associated data. It uses only
// symmetric encryption, never KMS signing (which moto gets wrong), and must
// never keep a plaintext data key beyond one call.
package kmsenvelope

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"platformapi/shared/adapters/envelope"
)

var _ envelope.Sealer = (*Sealer)(nil)

// Sealer seals under one KMS key. It is safe for concurrent use.
type Sealer struct {
	kms   *kms.Client
	keyID string
}

// New seals under keyID (an id, ARN or alias such as alias/platform-api).
func New(client *kms.Client, keyID string) *Sealer { return &Sealer{kms: client, keyID: keyID} }

const (
	version   = 1
	nonceSize = 12
	tagSize   = 16
)

// encryptionContext names the associated data by its hash: CloudTrail logs
// the context in clear, and the associated data may be an identifier.
func encryptionContext(associated []byte) map[string]string {
	sum := sha256.Sum256(associated)
	return map[string]string{"aad-sha256": hex.EncodeToString(sum[:])}
}

// Seal returns version ‖ uint16 length ‖ wrapped data key ‖ nonce ‖
// ciphertext ‖ tag.
func (s *Sealer) Seal(ctx context.Context, plaintext, associated []byte) ([]byte, error) {
	out, err := s.kms.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId: &s.keyID, KeySpec: types.DataKeySpecAes256, EncryptionContext: encryptionContext(associated),
	})
	if err != nil {
		return nil, classify("GenerateDataKey", err)
	}
	aead, err := newGCM(out.Plaintext)
	clear(out.Plaintext)
	if err != nil {
		return nil, err
	}
	wrapped := out.CiphertextBlob
	if len(wrapped) > 0xffff {
		return nil, fmt.Errorf("kmsenvelope: wrapped key of %d bytes", len(wrapped))
	}
	sealed := binary.BigEndian.AppendUint16([]byte{version}, uint16(len(wrapped)))
	sealed = append(sealed, wrapped...)
	nonce := make([]byte, nonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("kmsenvelope: %w", err)
	}
	sealed = append(sealed, nonce...)
	return aead.Seal(sealed, nonce, plaintext, associated), nil
}

func (s *Sealer) Open(ctx context.Context, sealed, associated []byte) ([]byte, error) {
	if len(sealed) < 3 || sealed[0] != version {
		return nil, envelope.ErrDecrypt
	}
	n := int(binary.BigEndian.Uint16(sealed[1:3]))
	rest := sealed[3:]
	if n == 0 || len(rest) < n+nonceSize+tagSize {
		return nil, envelope.ErrDecrypt
	}
	out, err := s.kms.Decrypt(ctx, &kms.DecryptInput{
		KeyId: &s.keyID, CiphertextBlob: rest[:n], EncryptionContext: encryptionContext(associated),
	})
	if err != nil {
		return nil, classify("Decrypt", err)
	}
	aead, err := newGCM(out.Plaintext)
	clear(out.Plaintext)
	if err != nil {
		return nil, envelope.ErrDecrypt
	}
	box := rest[n:]
	plain, err := aead.Open(nil, box[:nonceSize], box[nonceSize:], associated)
	if err != nil {
		return nil, envelope.ErrDecrypt
	}
	return plain, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("kmsenvelope: data key: %w", err)
	}
	return cipher.NewGCM(block)
}
