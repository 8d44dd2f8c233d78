package webhooks_test

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/adapters/envelope/localkey"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/memqueue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/webhooks"
)

// fakeResolver answers from a table; a missing name does not resolve.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, &dnsError{host}
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

type dnsError struct{ host string }

func (e *dnsError) Error() string { return "no such host " + e.host }

// publicHost resolves to a public address in every test.
const publicHost = "https://hooks.example.com/in"

var resolver = fakeResolver{"hooks.example.com": {"93.184.216.34"}}

// fixture is one account with a root key on one storage backend, a local
// sealer and an in-memory webhook queue with a dead-letter queue.
type fixture struct {
	t      *testing.T
	st     store.Store
	clock  *testclock.Clock
	sealer *localkey.Sealer
	q, dlq *memqueue.Queue
	keys   *keys.Repo
	repo   *webhooks.Repo
	root   []*keys.Key
}

func newFixture(t *testing.T, b teststores.Backend) *fixture {
	t.Helper()
	c := testclock.New(time.Now().UTC().Truncate(time.Second))
	sealer, err := localkey.Open(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	dlq := memqueue.New()
	f := &fixture{t: t, st: b.Open(t, c.Now), clock: c, sealer: sealer, dlq: dlq,
		q: memqueue.New(memqueue.WithDeadLetter(dlq, 3))}
	t.Cleanup(func() { f.q.Close(); dlq.Close() })
	f.keys = keys.NewRepo(f.st, c.Now)
	f.repo = f.newRepo(webhooks.Guard{Resolver: resolver})
	created, err := f.keys.CreateAccount(context.Background(), credittoken.Claims{ID: "tok-" + t.Name(), CreditsMicro: 1, ExpiresAt: c.Now().Add(time.Hour).Unix()}, keys.CreateKeyRequest{Label: "root"})
	if err != nil {
		t.Fatal(err)
	}
	f.root = []*keys.Key{created.Key}
	return f
}

func (f *fixture) newRepo(g webhooks.Guard) *webhooks.Repo {
	return webhooks.NewRepo(webhooks.Config{Store: f.st, Sealer: f.sealer, Queue: f.q, Guard: g, Now: f.clock.Now})
}

func (f *fixture) account() string { return f.root[0].AccountID }

// child creates a key under chain and returns the child's chain.
func (f *fixture) child(chain []*keys.Key, req keys.CreateKeyRequest) []*keys.Key {
	f.t.Helper()
	c, err := f.keys.CreateChild(context.Background(), chain, req, func(string) bool { return true })
	if err != nil {
		f.t.Fatal(err)
	}
	return append(append([]*keys.Key{}, chain...), c.Key)
}

// as is the caller for a chain, in a project scope or "".
func as(chain []*keys.Key, project string) webhooks.Caller {
	path := make([]string, len(chain))
	for i, k := range chain {
		path[i] = k.ID
	}
	return webhooks.Caller{AccountID: chain[0].AccountID, KeyPath: path, ProjectID: project, Key: chain[len(chain)-1]}
}

// create makes a webhook subscribed to events, failing the test on error.
func (f *fixture) create(c webhooks.Caller, url string, events ...string) (*webhooks.Webhook, string) {
	f.t.Helper()
	w, secret, err := f.repo.Create(context.Background(), c, webhooks.CreateRequest{URL: url, Events: events})
	if err != nil {
		f.t.Fatal(err)
	}
	return w, secret
}

// deliveries lists every delivery root can see, newest first.
func (f *fixture) deliveries(filter webhooks.DeliveryFilter) []*webhooks.Delivery {
	f.t.Helper()
	ds, _, err := f.repo.ListDeliveries(context.Background(), as(f.root, ""), filter, 100, "")
	if err != nil {
		f.t.Fatal(err)
	}
	return ds
}

// queued drains the queue without waiting and returns the bodies.
func queued(t *testing.T, q queue.Queue) []string {
	t.Helper()
	var out []string
	for {
		ms, err := q.Receive(context.Background(), 10, time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			return out
		}
		for _, m := range ms {
			out = append(out, string(m.Body))
			_ = q.Delete(context.Background(), m.Receipt)
		}
	}
}

func forEachBackend(t *testing.T, test func(t *testing.T, f *fixture)) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) { test(t, newFixture(t, b)) })
	}
}
