// Package teststores gives tests a fresh item store on every backend this run
// can reach: the embedded adapter always, DynamoDB when an emulator is set in
// AWS_ENDPOINT_URL (make test starts moto). Domain tests that must hold on
// both adapters range over All. It sits above the adapters it opens (and
// awstest, which makes the table), never inside the store folder they import.
package teststores

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/adapters/store/dynamostore"
)

// Backend opens a fresh store for one test, on the given clock.
type Backend struct {
	Name string
	Open func(t *testing.T, now func() time.Time) store.Store
}

// Embedded is the bbolt adapter in a temporary directory.
var Embedded = Backend{Name: "embedded", Open: func(t *testing.T, now func() time.Time) store.Store {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "platform.db"), boltstore.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}}

// DynamoDB is a fresh table on the emulator. The emulator serves one
// request at a time (see .ci/with-moto), so a test that races a hundred
// requests queues them: calls get a minute, not the ten seconds a real
// deployment allows.
var DynamoDB = Backend{Name: "dynamodb", Open: func(t *testing.T, now func() time.Time) store.Store {
	env := awstest.Env(t)
	client, table := awstest.Table(t, env)
	return dynamostore.New(client, table, dynamostore.WithClock(now))
}}

// All lists the backends available to this run.
func All() []Backend {
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		return []Backend{Embedded}
	}
	return []Backend{Embedded, DynamoDB}
}
