// Package localkey is the embedded twin of kmsenvelope: a 32-byte master key
// in a file (created 0600 on first use) wraps a fresh AES-256-GCM data key per
// secret, exactly the shape KMS gives, so both adapters store the same kind
// of envelope. The master key must never leave this package: it is read
// once, kept in memory, and never logged or returned.
package localkey

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"platformapi/shared/adapters/envelope"
)

var _ envelope.Sealer = (*Sealer)(nil)

const keySize = 32

// Sealer seals with the master key of one file. It is safe for concurrent use.
type Sealer struct {
	master cipher.AEAD
}

// Open loads the master key at path, creating it if it does not exist yet.
// Two processes racing to create it end up with the same key.
func Open(path string) (*Sealer, error) {
	key, err := loadOrCreate(path)
	if err != nil {
		return nil, err
	}
	master, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	return &Sealer{master: master}, nil
}

// loadOrCreate publishes a new key with a hard link from a complete temporary
// file: the link either creates the key whole or fails because another
// process got there first, so nobody ever reads a half-written key.
func loadOrCreate(path string) ([]byte, error) {
	if key, err := read(path); !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("localkey: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".master-*")
	if err != nil {
		return nil, fmt.Errorf("localkey: create master key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(key)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	switch {
	case err == nil:
		return key, nil
	case errors.Is(err, fs.ErrExist):
		return read(path)
	}
	return nil, fmt.Errorf("localkey: create master key: %w", err)
}

func read(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("localkey: read master key: %w", err)
	}
	if len(key) != keySize {
		return nil, fmt.Errorf("localkey: master key %s holds %d bytes, not %d", path, len(key), keySize)
	}
	return key, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("localkey: %w", err)
	}
	return cipher.NewGCM(block)
}

// Seal returns version ‖ wrapped data key ‖ sealed secret. Both layers
// authenticate the associated data, so neither can be moved to another
// record.
func (s *Sealer) Seal(_ context.Context, plaintext, associated []byte) ([]byte, error) {
	dataKey := make([]byte, keySize)
	if _, err := rand.Read(dataKey); err != nil {
		return nil, fmt.Errorf("localkey: %w", err)
	}
	data, err := newGCM(dataKey)
	if err != nil {
		return nil, err
	}
	out := []byte{version}
	out = sealWith(s.master, out, dataKey, associated)
	return sealWith(data, out, plaintext, associated), nil
}

func (s *Sealer) Open(_ context.Context, sealed, associated []byte) ([]byte, error) {
	if len(sealed) < 1+wrappedSize || sealed[0] != version {
		return nil, envelope.ErrDecrypt
	}
	dataKey, err := openWith(s.master, sealed[1:1+wrappedSize], associated)
	if err != nil {
		return nil, err
	}
	data, err := newGCM(dataKey)
	if err != nil {
		return nil, err
	}
	return openWith(data, sealed[1+wrappedSize:], associated)
}

const (
	version     = 1
	nonceSize   = 12
	tagSize     = 16
	wrappedSize = nonceSize + keySize + tagSize
)

// sealWith appends nonce ‖ ciphertext ‖ tag to dst.
func sealWith(aead cipher.AEAD, dst, plaintext, associated []byte) []byte {
	nonce := make([]byte, nonceSize)
	_, _ = rand.Read(nonce) // crypto/rand never fails on supported platforms
	dst = append(dst, nonce...)
	return aead.Seal(dst, nonce, plaintext, associated)
}

func openWith(aead cipher.AEAD, box, associated []byte) ([]byte, error) {
	if len(box) < nonceSize+tagSize {
		return nil, envelope.ErrDecrypt
	}
	plain, err := aead.Open(nil, box[:nonceSize], box[nonceSize:], associated)
	if err != nil {
		return nil, envelope.ErrDecrypt
	}
	return plain, nil
}
