package s3blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"platformapi/shared/adapters/awsenv"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/blob/blobtest"
	"platformapi/shared/adapters/blob/s3blob"
)

// threshold is S3's smallest part size, so the suite's large objects take
// the multipart path without being large.
const threshold = 5 << 20

func TestConformance(t *testing.T) {
	env := awstest.Env(t)
	blobtest.RunConformance(t, blobtest.Harness{
		New: func(t *testing.T) blob.Bucket {
			client, name := awstest.Bucket(t, env)
			return s3blob.New(client, name, s3blob.WithMultipartThreshold(threshold), s3blob.WithListPageSize(2))
		},
		CanPresign:  true,
		LargeSize:   2*threshold + 1,
		ManyObjects: 5,
	})
}

// TestOutagesAnswerUnavailableAndStoreNothing injects S3's failures on each
// call of both write paths, after the SDK's own retries.
func TestOutagesAnswerUnavailableAndStoreNothing(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	client, name := awstest.Bucket(t, env)
	b := s3blob.New(client, name, s3blob.WithMultipartThreshold(threshold))
	ctx := awstest.Context(t)
	for _, c := range []struct {
		op   string
		size int
	}{
		{"S3.PutObject", 10},
		{"S3.UploadPart", threshold + 1},
		{"S3.CopyObject", threshold + 1},
	} {
		for _, fault := range []awsenv.Fault{awsenv.Throttle, awsenv.ServerError} {
			t.Run(fmt.Sprintf("%s/%d", c.op, fault), func(t *testing.T) {
				faults.Set(c.op, fault)
				_, err := b.Put(ctx, "k", bytes.NewReader(make([]byte, c.size)), blob.PutOptions{})
				faults.Clear()
				if !errors.Is(err, blob.ErrUnavailable) {
					t.Fatalf("err = %v; want ErrUnavailable", err)
				}
				if _, err := b.Head(ctx, "k"); !errors.Is(err, blob.ErrNotFound) {
					t.Fatalf("after the outage: %v; want nothing stored", err)
				}
			})
		}
	}
}

// TestPutHandsS3TheSHA256ToVerify proves S3 is asked to verify every byte it
// receives: a small object carries the whole body's SHA-256, each part of a
// multipart upload its own (as a header or a trailer, as the SDK chooses).
func TestPutHandsS3TheSHA256ToVerify(t *testing.T) {
	var mu sync.Mutex
	sent := map[string][]string{} // operation -> SHA-256 checksum headers or trailers sent
	capture := func(st *middleware.Stack) error {
		return st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("captureChecksums",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok {
					v := req.Header.Get("X-Amz-Checksum-Sha256")
					if v == "" && strings.EqualFold(req.Header.Get("X-Amz-Trailer"), "x-amz-checksum-sha256") {
						v = "trailer"
					}
					mu.Lock()
					op := middleware.GetOperationName(ctx)
					sent[op] = append(sent[op], v)
					mu.Unlock()
				}
				return next.HandleDeserialize(ctx, in)
			}), middleware.After)
	}
	env := awstest.Env(t, awsenv.WithAPIOptions(capture))
	client, name := awstest.Bucket(t, env)
	b := s3blob.New(client, name, s3blob.WithMultipartThreshold(threshold))
	ctx := awstest.Context(t)

	small := bytes.Repeat([]byte("checked "), 1000)
	sum := sha256.Sum256(small)
	if _, err := b.Put(ctx, "small", bytes.NewReader(small), blob.PutOptions{ExpectedSHA256: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "large", bytes.NewReader(make([]byte, threshold+1)), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := sent["PutObject"], []string{base64.StdEncoding.EncodeToString(sum[:])}; !slices.Equal(got, want) {
		t.Errorf("PutObject sent SHA-256 %q; want %q", got, want)
	}
	if parts := sent["UploadPart"]; len(parts) != 2 || slices.Contains(parts, "") {
		t.Errorf("UploadPart sent SHA-256 %q; want one per part for both parts", parts)
	}
}
