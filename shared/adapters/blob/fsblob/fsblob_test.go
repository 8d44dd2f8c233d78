package fsblob_test

import (
	"testing"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/blob/blobtest"
	"platformapi/shared/adapters/blob/fsblob"
)

func TestConformance(t *testing.T) {
	blobtest.RunConformance(t, blobtest.Harness{
		New: func(t *testing.T) blob.Bucket {
			b, err := fsblob.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		CanPresign: false,
	})
}
