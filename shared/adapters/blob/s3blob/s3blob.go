// Package s3blob is the S3 adapter of the blob port. We hash every object
// ourselves while streaming it and check ExpectedSHA256 before the object
// becomes visible, never trusting S3 (or an emulator, which may not check at
// all) to verify a checksum for us. It must never leave a partial or
// unverified object under the caller's key.
//
// Objects up to the multipart threshold are buffered, hashed and written in
// one PutObject (If-None-Match: * for IfNotExists). Larger ones are uploaded
// in parts to a temporary key, verified, then copied into place; CopyObject
// limits those to 5 GiB. The temporary prefix deserves a lifecycle rule that
// expires leftovers of crashed processes.
package s3blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"platformapi/shared/adapters/blob"
)

var _ blob.Bucket = (*Bucket)(nil)

const (
	// metaSHA256 is the user-metadata entry holding our hash of the body.
	metaSHA256 = "blob-sha256"
	// TempPrefix holds uploads that are not verified yet.
	TempPrefix = ".tmp/"
	// defaultThreshold is also the part size: S3 wants parts of 5 MiB or more.
	defaultThreshold = 8 << 20
)

// Bucket is a blob.Bucket on one S3 bucket. It is safe for concurrent use.
type Bucket struct {
	s3        *s3.Client
	presign   *s3.PresignClient
	bucket    string
	threshold int64
	pageSize  int32
}

// Option configures New.
type Option func(*Bucket)

// WithMultipartThreshold sets the size above which objects are uploaded in
// parts of that size (at least 5 MiB, S3's smallest part).
func WithMultipartThreshold(n int64) Option {
	return func(b *Bucket) { b.threshold = max(n, manager.MinUploadPartSize) }
}

// New returns a bucket on an existing S3 bucket (see CreateBucket).
func New(client *s3.Client, bucket string, opts ...Option) *Bucket {
	b := &Bucket{s3: client, presign: s3.NewPresignClient(client), bucket: bucket, threshold: defaultThreshold, pageSize: 1000}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Close does nothing: the SDK client belongs to the caller.
func (b *Bucket) Close() error { return nil }

func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, opts blob.PutOptions) (blob.Info, error) {
	if key == "" {
		return blob.Info{}, errors.New("s3blob: empty key")
	}
	if strings.HasPrefix(key, TempPrefix) {
		return blob.Info{}, fmt.Errorf("s3blob: keys under %s are reserved", TempPrefix)
	}
	if opts.ContentType == "" {
		opts.ContentType = "application/octet-stream"
	}
	src := &hashingReader{ctx: ctx, r: r, h: sha256.New()}
	head := make([]byte, b.threshold+1)
	n, err := io.ReadFull(src, head)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return b.putSmall(ctx, key, head[:n], src.sum(), opts)
	case err != nil:
		return blob.Info{}, src.cause(err)
	}
	return b.putLarge(ctx, key, io.MultiReader(bytes.NewReader(head), src), src, opts)
}

func (b *Bucket) putSmall(ctx context.Context, key string, body []byte, sum []byte, opts blob.PutOptions) (blob.Info, error) {
	info, err := b.verify(key, int64(len(body)), sum, opts)
	if err != nil {
		return blob.Info{}, err
	}
	in := &s3.PutObjectInput{
		Bucket: &b.bucket, Key: &key, Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		ContentType: &opts.ContentType, Metadata: metadata(info),
		// S3 verifies the bytes it receives against our digest and refuses
		// the write otherwise, so corruption between us and S3 is caught
		// too; we have already checked ExpectedSHA256 ourselves.
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum)),
	}
	if opts.IfNotExists {
		in.IfNoneMatch = aws.String("*")
	}
	if _, err := b.s3.PutObject(ctx, in); err != nil {
		return blob.Info{}, classify("PutObject", key, err)
	}
	return info, nil
}

func (b *Bucket) putLarge(ctx context.Context, key string, body io.Reader, src *hashingReader, opts blob.PutOptions) (blob.Info, error) {
	if opts.IfNotExists {
		// Refuse before uploading what would be refused anyway; the copy's
		// If-None-Match is what settles a race.
		if _, err := b.Head(ctx, key); err == nil {
			return blob.Info{}, fmt.Errorf("%w: %s", blob.ErrExists, key)
		} else if !errors.Is(err, blob.ErrNotFound) {
			return blob.Info{}, err
		}
	}
	tmp := TempPrefix + randomName()
	defer b.discard(tmp)
	// The uploader's successor, feature/s3/transfermanager, is a separate
	// pre-1.0 module; moving to it is a dependency change of its own.
	//lint:ignore SA1019 see above
	up := manager.NewUploader(b.s3, func(u *manager.Uploader) { u.PartSize = b.threshold })
	// Each part carries its SHA-256, which S3 verifies on arrival; the
	// whole-object hash is ours, checked before the copy into place.
	//lint:ignore SA1019 as NewUploader
	_, err := up.Upload(ctx, &s3.PutObjectInput{Bucket: &b.bucket, Key: &tmp, Body: body, ContentType: &opts.ContentType,
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		if src.err != nil {
			return blob.Info{}, src.cause(src.err)
		}
		return blob.Info{}, classify("Upload", key, err)
	}
	info, err := b.verify(key, src.n, src.sum(), opts)
	if err != nil {
		return blob.Info{}, err
	}
	in := &s3.CopyObjectInput{
		Bucket: &b.bucket, Key: &key, CopySource: aws.String(url.PathEscape(b.bucket) + "/" + url.PathEscape(tmp)),
		MetadataDirective: types.MetadataDirectiveReplace, ContentType: &opts.ContentType, Metadata: metadata(info),
	}
	if opts.IfNotExists {
		in.IfNoneMatch = aws.String("*")
	}
	if _, err := b.s3.CopyObject(ctx, in); err != nil {
		return blob.Info{}, classify("CopyObject", key, err)
	}
	return info, nil
}

// discard deletes a temporary upload even when the caller's context is done.
func (b *Bucket) discard(tmp string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = b.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.bucket, Key: &tmp})
}

func (b *Bucket) verify(key string, size int64, sum []byte, opts blob.PutOptions) (blob.Info, error) {
	got := hex.EncodeToString(sum)
	if opts.ExpectedSHA256 != "" && !strings.EqualFold(opts.ExpectedSHA256, got) {
		return blob.Info{}, fmt.Errorf("%w: %s", blob.ErrChecksumMismatch, key)
	}
	md := make(map[string]string, len(opts.Metadata))
	for k, v := range opts.Metadata {
		md[strings.ToLower(k)] = v
	}
	return blob.Info{Key: key, Size: size, SHA256: got, ContentType: opts.ContentType, Metadata: md, Modified: time.Now().UTC()}, nil
}

func metadata(info blob.Info) map[string]string {
	md := make(map[string]string, len(info.Metadata)+1)
	for k, v := range info.Metadata {
		md[k] = v
	}
	md[metaSHA256] = info.SHA256
	return md
}

func (b *Bucket) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	out, err := b.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		return nil, blob.Info{}, classify("GetObject", key, err)
	}
	return out.Body, info(key, out.ContentLength, out.ContentType, out.Metadata, out.LastModified), nil
}

func (b *Bucket) Head(ctx context.Context, key string) (blob.Info, error) {
	out, err := b.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		return blob.Info{}, classify("HeadObject", key, err)
	}
	return info(key, out.ContentLength, out.ContentType, out.Metadata, out.LastModified), nil
}

func info(key string, size *int64, contentType *string, md map[string]string, modified *time.Time) blob.Info {
	user := make(map[string]string, len(md))
	for k, v := range md {
		user[strings.ToLower(k)] = v
	}
	sum := user[metaSHA256]
	delete(user, metaSHA256)
	return blob.Info{
		Key: key, Size: aws.ToInt64(size), SHA256: sum, ContentType: aws.ToString(contentType),
		Metadata: user, Modified: aws.ToTime(modified),
	}
}

func (b *Bucket) Delete(ctx context.Context, key string) error {
	if _, err := b.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.bucket, Key: &key}); err != nil {
		return classify("DeleteObject", key, err)
	}
	return nil
}

// PresignGet signs a GET of key valid for ttl, so a download can go from S3
// straight to the client instead of through a Lambda.
func (b *Bucket) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	req, err := b.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: &key}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", classify("PresignGetObject", key, err)
	}
	return req.URL, nil
}
