package httpapi_test

import (
	"context"
	"fmt"
	"testing"

	"platformapi/shared/store"
)

// storedKey renders a key's stored record, to prove what is and is not at rest.
func storedKey(t *testing.T, e *env, id string) string {
	t.Helper()
	it, err := e.store.Get(context.Background(), store.Key{PK: "key#" + id, SK: "key"})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%v %s", it, it.Bytes("doc"))
}
