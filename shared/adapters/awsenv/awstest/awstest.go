// Package awstest connects tests to the local AWS emulator (moto_server
// started by .ci/with-moto, or LocalStack) and makes fresh, uniquely named
// resources that are deleted when the test ends. It must never reach a
// non-loopback endpoint: tests have no business talking to real AWS.
package awstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/sharedconfig"
	"platformapi/shared/adapters/store/dynamostore"
)

// CallTimeout bounds one SDK call of a test's client unless
// awsenv.CallTimeoutEnv says otherwise (.ci/with-moto sets it for every
// process it runs, servers and Lambda binaries included). The emulator
// serves one request at a time to every package of the suite at once, so
// a call that real AWS answers in milliseconds can wait many seconds
// behind the others; the bound only has to end a hung connection.
const CallTimeout = time.Minute

// Env returns an Env on the emulator, or skips the test when there is none.
// Its calls are bounded by CallTimeout (or awsenv.CallTimeoutEnv) unless
// opts say otherwise.
func Env(t testing.TB, opts ...awsenv.Option) *awsenv.Env {
	t.Helper()
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	if endpoint == "" {
		t.Skip("AWS_ENDPOINT_URL not set; run through make test")
	}
	if !loopback(endpoint) {
		t.Skipf("AWS_ENDPOINT_URL %s is not a loopback address; tests only use a local emulator", endpoint)
	}
	base := []awsenv.Option{awsenv.WithSource(sharedconfig.Load)}
	if os.Getenv(awsenv.CallTimeoutEnv) == "" {
		base = append(base, awsenv.WithCallTimeout(CallTimeout))
	}
	env, err := awsenv.New(Context(t), append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func loopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Context is a context for emulator calls, cancelled when the test ends.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Name returns a fresh resource name valid for tables, buckets and queues.
func Name(t testing.TB, prefix string) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(prefix) + "-" + hex.EncodeToString(b[:])
}

// Table creates a fresh item-store table, deleted when the test ends.
func Table(t testing.TB, env *awsenv.Env) (*dynamodb.Client, string) {
	t.Helper()
	db, name := env.DynamoDB(), Name(t, "test-table")
	if err := dynamostore.CreateTable(Context(t), db, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name}); err != nil {
			t.Logf("delete table %s: %v", name, err)
		}
	})
	return db, name
}
