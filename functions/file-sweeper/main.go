// Command file-sweeper is the scheduled Lambda that deletes file objects
// no record owns (files.Repo.Sweep): those of uploads whose process died,
// or whose commit failed, between the object and the record, and those of
// deletions that died between the record and the object. An EventBridge
// rule invokes it on files.SweeperFunction's schedule; the local server
// runs the same pass on a ticker (work.Run).
package main

import (
	"context"

	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/groups/files"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeScheduled("file-sweeper", func(ctx context.Context, e *lambdaedge.Env) (func(context.Context) error, error) {
		bucket := s3blob.New(e.AWS.S3(), e.AWS.Names.FilesBucket)
		return files.Work(files.WorkDeps{Store: e.Store, Bucket: bucket, Logger: e.Logger}).Pass(files.SweeperFunction.Name)
	})
}
