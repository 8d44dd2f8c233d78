package connections_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/envelope/kmsenvelope"
	"platformapi/shared/adapters/envelope/localkey"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/adapters/store/dynamostore"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/connections"
)

// counting counts the writes that reach the store.
type counting struct {
	store.Store
	writes atomic.Int64
}

func (c *counting) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	c.writes.Add(1)
	return c.Store.Put(ctx, it, conds...)
}
func (c *counting) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	c.writes.Add(1)
	return c.Store.Update(ctx, k, u, conds...)
}
func (c *counting) Delete(ctx context.Context, k store.Key, conds ...store.Cond) error {
	c.writes.Add(1)
	return c.Store.Delete(ctx, k, conds...)
}
func (c *counting) Transact(ctx context.Context, ops []store.Op) error {
	c.writes.Add(1)
	return c.Store.Transact(ctx, ops)
}

// env is one backend: the repository, its store, its clock, and a way to
// read every byte the backend holds, below the port.
type env struct {
	repo   *connections.Repo
	st     *counting
	sealer envelope.Sealer
	clock  *testclock.Clock
	// raw returns every stored byte string: attribute names and values, or
	// the whole database file.
	raw func(t *testing.T) [][]byte
}

type backend struct {
	name string
	open func(t *testing.T, c *testclock.Clock) env
}

// embedded is bbolt with a local master key; raw is the database file.
var embedded = backend{"embedded", func(t *testing.T, c *testclock.Clock) env {
	dir := t.TempDir()
	path := filepath.Join(dir, "platform.db")
	st, err := boltstore.Open(path, boltstore.WithClock(c.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sealer, err := localkey.Open(filepath.Join(dir, "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	cs := &counting{Store: st}
	return env{repo: connections.NewRepo(cs, sealer, c.Now), st: cs, sealer: sealer, clock: c, raw: func(t *testing.T) [][]byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return [][]byte{b}
	}}
}}

// dynamo is a fresh DynamoDB table and KMS key on the emulator; raw scans
// the table.
var dynamo = backend{"dynamodb", func(t *testing.T, c *testclock.Clock) env {
	aws := awstest.Env(t)
	client, table := awstest.Table(t, aws)
	kmsClient, alias := awstest.Key(t, aws)
	cs := &counting{Store: dynamostore.New(client, table, dynamostore.WithClock(c.Now))}
	sealer := kmsenvelope.New(kmsClient, alias)
	return env{repo: connections.NewRepo(cs, sealer, c.Now), st: cs, sealer: sealer, clock: c, raw: func(t *testing.T) [][]byte {
		var out [][]byte
		p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: &table, ConsistentRead: ptr(true)})
		for p.HasMorePages() {
			page, err := p.NextPage(awstest.Context(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, item := range page.Items {
				for name, av := range item {
					out = append(out, []byte(name))
					out = append(out, flatten(av)...)
				}
			}
		}
		return out
	}}
}}

func flatten(av types.AttributeValue) [][]byte {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return [][]byte{[]byte(v.Value)}
	case *types.AttributeValueMemberN:
		return [][]byte{[]byte(v.Value)}
	case *types.AttributeValueMemberB:
		return [][]byte{v.Value}
	case *types.AttributeValueMemberBOOL:
		return nil
	}
	b, _ := json.Marshal(av) // a type this package never writes: search its encoding
	return [][]byte{b}
}

func backends() []backend {
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		return []backend{embedded}
	}
	return []backend{embedded, dynamo}
}

func eachBackend(t *testing.T, test func(t *testing.T, e env)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			test(t, b.open(t, testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))))
		})
	}
}

const (
	acct  = "acct_1"
	prj   = "prj_01JAAAAAAAAAAAAAAAAAAAAAAA"
	other = "prj_01JBBBBBBBBBBBBBBBBBBBBBBB"
)

var ctx = context.Background()

func create(t *testing.T, e env, projectID string, req connections.CreateRequest) *connections.Connection {
	t.Helper()
	c, err := e.repo.Create(ctx, acct, projectID, req)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bearer(token string, services ...string) connections.CreateRequest {
	if len(services) == 0 {
		services = []string{"core-research"}
	}
	return connections.CreateRequest{Label: "vendor", Type: connections.TypeBearer, Credentials: json.RawMessage(`{"token":"` + token + `"}`), ServiceIDs: services}
}

func ptr[T any](v T) *T { return &v }

func wantCode(t *testing.T, err error, code apierr.Code) *apierr.Error {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	return ae
}
