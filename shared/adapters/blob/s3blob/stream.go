package s3blob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
)

// hashingReader hashes what passes through it, stops when the context ends,
// and remembers the caller's own read error so it is reported as such rather
// than as whatever the uploader wrapped it in.
type hashingReader struct {
	ctx context.Context
	r   io.Reader
	h   hash.Hash
	n   int64
	err error
}

func (s *hashingReader) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return 0, err
	}
	n, err := s.r.Read(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = err
	}
	return n, err
}

func (s *hashingReader) sum() []byte { return s.h.Sum(nil) }

// cause prefers the reader's own error to err.
func (s *hashingReader) cause(err error) error {
	if s.err != nil {
		err = s.err
	}
	return fmt.Errorf("s3blob: read body: %w", err)
}

func randomName() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b[:])
}
