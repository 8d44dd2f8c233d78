// Package provision creates the AWS resources of the local server when it
// runs on an emulator (LocalStack, moto: the local server's
// --create-resources, the benchmark and the tests); on real AWS, CDK creates
// all of it. It is its own package so that no deployed function links it
// (shared/harness/lambdatest checks that).
package provision

import (
	"context"
	"strings"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/adapters/envelope/kmsenvelope"
	"platformapi/shared/adapters/queue/sqsqueue"
	"platformapi/shared/adapters/store/dynamostore"
	"platformapi/shared/adapters/work"
)

// Create creates whatever named resource of e is missing: the table with
// its stream of new images (the audit rollup reads it), the buckets, the declared queues with their dead-letter queues (name +
// "-dlq"; the local process passes every queue, platform.Queues) and the
// KMS key behind its alias. Queues created here get their URLs recorded in
// e.Names.
func Create(ctx context.Context, e *awsenv.Env, queues []work.Queue) error {
	db := e.DynamoDB()
	if err := dynamostore.CreateTable(ctx, db, e.Names.Table); err != nil {
		return err
	}
	if err := dynamostore.EnableStream(ctx, db, e.Names.Table); err != nil {
		return err
	}
	s3c := e.S3()
	for _, b := range []string{e.Names.FilesBucket, e.Names.ArchivesBucket, e.Names.ArtifactsBucket} {
		if err := s3blob.CreateBucket(ctx, s3c, b); err != nil {
			return err
		}
	}
	sqsc := e.SQS()
	if e.Names.Queues == nil {
		e.Names.Queues = map[string]awsenv.Queue{}
	}
	for _, decl := range queues {
		q := e.Names.Queue(decl)
		if q.URL != "" {
			continue
		}
		url, err := sqsqueue.CreateQueue(ctx, sqsc, q.Name, q.Name+"-dlq", decl.MaxReceives)
		if err != nil {
			return err
		}
		q.URL = url
		e.Names.Queues[decl.Name] = q
	}
	if strings.HasPrefix(e.Names.KMSKeyID, "alias/") {
		if _, err := kmsenvelope.CreateKey(ctx, e.KMS(), e.Names.KMSKeyID); err != nil {
			return err
		}
	}
	return nil
}
