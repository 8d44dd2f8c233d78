package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/app"
	"platformapi/shared/base/jsonlog"
	"platformapi/shared/domain/audit"
	"platformapi/shared/lambdaedge/auditlogs"
)

// storageCase is what one request costs in storage: the round trips per
// operation (counted at the SDK against the emulator, or by the meter on
// embedded storage) and the items and request units the meter counted.
type storageCase struct {
	RoundTrips map[string]float64 `json:"roundTrips"`
	Usage      map[string]opUsage `json:"usage"`
}

// Total is the round trips of one request.
func (c storageCase) Total() float64 {
	n := 0.0
	for _, v := range c.RoundTrips {
		n += v
	}
	return n
}

// Units are the DynamoDB read and write request units of one request.
func (c storageCase) Units() (read, write float64) {
	for _, u := range c.Usage {
		read += u.ReadUnits
		write += u.WriteUnits
	}
	return read, write
}

// Ops lists the operations seen, sorted, for a stable table.
func (c storageCase) Ops() []string {
	var ops []string
	for op := range c.RoundTrips {
		ops = append(ops, op)
	}
	for op := range c.Usage {
		if _, ok := c.RoundTrips[op]; !ok {
			ops = append(ops, op)
		}
	}
	slices.Sort(ops)
	return ops
}

// storageResult holds the counted requests.
type storageResult struct {
	Source string
	// Read is GET /v1/credits/balance, audited as deployed: the event
	// shipped as a log line. ReadPut is the same read with the event as a
	// PutItem on the request path, as before events rode on the access line.
	Read    storageCase
	ReadPut storageCase
	// ReadNoAudit is the same read with auditing off: what it cost before
	// every request left an audit event.
	ReadNoAudit storageCase
	Write       storageCase // POST /v1/projects with a fresh Idempotency-Key
	Replay      storageCase // the same POST again: the stored answer is replayed
	// Ingest is what audit-ingest does per shipped event, off the request
	// path; LogBytes is what an audited read's event adds to its access line.
	Ingest   storageCase
	LogBytes float64
	// EventItemBytes is an audit event item's mean size on DynamoDB.
	EventItemBytes float64
	// Lag is each timed read's wait from its answer to its event listed.
	Lag []time.Duration
	// Capacity is the capacity model's cases, by name (capacity.go).
	Capacity map[string]capacityCase
}

// callCounter is the SDK's awsenv.CallCounter, or the meter standing in for
// it on embedded storage.
type callCounter interface {
	Snapshot() map[string]int
	Reset()
}

// emulatorEndpoint is AWS_ENDPOINT_URL when it names a loopback emulator.
// Anything else is refused: the benchmark creates and deletes resources,
// which it must never do in a real account.
func emulatorEndpoint() string {
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	u, err := url.Parse(endpoint)
	if endpoint == "" || err != nil {
		return ""
	}
	if host := u.Hostname(); host == "localhost" {
		return endpoint
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsLoopback() {
		return endpoint
	}
	return ""
}

// measureStorage counts the storage work of the measured requests, each
// sent samples times after one warm-up. Against the emulator the round
// trips are the SDK's own count, in fresh, uniquely named resources that
// are deleted afterwards.
func measureStorage(ctx context.Context, dir, emulator string, samples int) (storageResult, error) {
	cfg := app.Config{Backend: "embedded", DataDir: filepath.Join(dir, "storage")}
	res := storageResult{Source: "embedded store, counted at the item-store port (no loopback AWS_ENDPOINT_URL)"}
	if emulator != "" {
		if err := useFreshNames(); err != nil {
			return res, err
		}
		cfg.Backend, cfg.CreateResources = "aws", true
		res.Source = "SDK round trips against " + emulator
	}
	rt, err := app.Open(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer rt.Close()
	if rt.AWS != nil {
		defer removeResources(context.WithoutCancel(ctx), rt.AWS)
	}
	m := newMeter(rt.Store)
	// Every read is metered, authentication's too, as DynamoDB would
	// count it: the embedded store's uncopied reads would pass the meter by.
	rt.Store, rt.SharedReads = m, nil
	var calls callCounter = m
	if rt.AWS != nil {
		calls = rt.AWS.Calls
	}
	// The request path's audit as a Lambda does it: the event rides on the
	// request's access line, no round trip. Storing the event (audit-ingest)
	// and counting it (the stream's rollup) run off the path; the ingest is
	// counted apart.
	shipped := &shippedLines{}
	rt.Audit = audit.NewShippingRecorder(shipped, nil)
	srv, err := rt.NewServer(slog.New(jsonlog.New(shipped, nil)), nil)
	if err != nil {
		return res, err
	}
	rt.Audit = audit.NewRecorder(m, nil)
	putSrv, err := rt.NewServer(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		return res, err
	}
	rt.Audit = nil
	unaudited, err := rt.NewServer(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		return res, err
	}
	c := apiClient{h: srv}
	chain, accountID, err := keyChain(c, rt.Signer)
	if err != nil {
		return res, err
	}
	secret := chain[len(chain)-1]
	plain, err := siblingKeys(c, chain[len(chain)-2], 4)
	if err != nil {
		return res, err
	}
	auth := map[string]string{"Authorization": "Bearer " + secret}
	read := func(int) error {
		_, err := c.expect(http.StatusOK, http.MethodGet, balancePath, auth, nil)
		return err
	}
	readPut := func(int) error {
		_, err := apiClient{h: putSrv}.expect(http.StatusOK, http.MethodGet, balancePath, auth, nil)
		return err
	}
	readNoAudit := func(int) error {
		_, err := apiClient{h: unaudited}.expect(http.StatusOK, http.MethodGet, balancePath, auth, nil)
		return err
	}
	write := func(i int) error {
		h := map[string]string{"Authorization": auth["Authorization"], "Idempotency-Key": fmt.Sprintf("bench-write-%06d", i)}
		_, err := c.expect(http.StatusCreated, http.MethodPost, projectsPath, h, map[string]any{"name": fmt.Sprintf("bench project %d", i)})
		return err
	}
	replay := func(int) error { return write(0) }
	var readLines, warmLines []string
	for _, s := range []struct {
		into *storageCase
		send func(int) error
	}{
		{&res.Read, read},
		{&res.ReadPut, readPut},
		{&res.ReadNoAudit, readNoAudit},
		{&res.Write, write},
		{&res.Replay, replay},
	} {
		// Request 0 is a warm-up: it takes what only a first request pays
		// (a counter window's creation, for one) out of the count.
		if err := s.send(0); err != nil {
			return res, err
		}
		calls.Reset()
		m.Reset()
		if warm := shipped.take(); s.into == &res.Read {
			warmLines = warm
		}
		for i := 1; i <= samples; i++ {
			if err := s.send(i); err != nil {
				return res, err
			}
		}
		*s.into = perRequest(calls.Snapshot(), m.Usage(), samples)
		if s.into == &res.Read {
			readLines = shipped.take()
			n, err := auditBytes(readLines)
			if err != nil {
				return res, err
			}
			res.LogBytes = float64(n) / float64(samples)
		}
	}
	for _, l := range readLines {
		if _, _, ok := audit.Shipped(l); !ok {
			return res, fmt.Errorf("bench: an undecodable audit line %q", l)
		}
	}
	// The ingest instance reads a key's record the first time it sees the
	// key (the warm-up read's line, not counted), then keeps its chain: the
	// counted lines come one delivery each, as a key read a few times a
	// second is delivered, and cost their puts alone.
	in := auditlogs.New(m)
	ingest := func(lines []string) error {
		for _, l := range lines {
			ev, err := delivery([]string{l})
			if err != nil {
				return err
			}
			if err := in.Handle(ctx, ev); err != nil {
				return err
			}
		}
		return nil
	}
	if err := ingest(warmLines); err != nil {
		return res, err
	}
	calls.Reset()
	m.Reset()
	if err := ingest(readLines); err != nil {
		return res, err
	}
	res.Ingest = perRequest(calls.Snapshot(), m.Usage(), max(len(readLines), 1))
	res.EventItemBytes = m.EventItemBytes()
	ingested := capacityOf(capacityLabels[capAuditAccount], m.Items(), max(len(readLines), 1), false)
	res.Capacity, err = measureCapacity(ctx, apiClient{h: unaudited}, m, accountKeys{accountID: accountID, limited: secret, plain: plain}, samples)
	if err != nil {
		return res, err
	}
	res.Capacity[capAuditAccount] = ingested
	res.Lag, err = auditLag(ctx, m, accountID, shipped, read, samples)
	return res, err
}

// perRequest divides counts over n requests.
func perRequest(trips map[string]int, usage map[string]opUsage, n int) storageCase {
	c := storageCase{RoundTrips: map[string]float64{}, Usage: map[string]opUsage{}}
	for op, v := range trips {
		c.RoundTrips[op] = float64(v) / float64(n)
	}
	for op, u := range usage {
		c.Usage[op] = opUsage{Calls: u.Calls / float64(n), Items: u.Items / float64(n), ReadUnits: u.ReadUnits / float64(n), WriteUnits: u.WriteUnits / float64(n)}
	}
	return c
}

// useFreshNames points the process at resources no other run uses.
func useFreshNames() error {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	name := "bench-" + hex.EncodeToString(b[:])
	for k, v := range map[string]string{
		"TABLE_NAME": name, "FILES_BUCKET": name + "-files", "ARCHIVES_BUCKET": name + "-archives",
		"ARTIFACTS_BUCKET": name + "-artifacts", "WEBHOOK_QUEUE_NAME": name + "-webhooks",
		"RUNS_QUEUE_NAME": name + "-runs", "KMS_KEY_ID": "alias/" + name,
		// Set URLs would make CreateResources skip the queues.
		"WEBHOOK_QUEUE_URL": "", "RUNS_QUEUE_URL": "",
	} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// removeResources deletes what CreateResources made, so that a long-lived
// emulator (LocalStack) does not collect a table and queues per run. It is
// best effort: the moto that .ci/with-moto starts dies with the run anyway.
func removeResources(ctx context.Context, e *awsenv.Env) {
	n := e.Names
	_, _ = e.DynamoDB().DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &n.Table})
	s3c := e.S3()
	for _, b := range []string{n.FilesBucket, n.ArchivesBucket, n.ArtifactsBucket} {
		_, _ = s3c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &b})
	}
	sqsc := e.SQS()
	for _, q := range n.Queues {
		for _, name := range []string{q.Name, q.Name + "-dlq"} {
			if u, err := e.QueueURL(ctx, awsenv.Queue{Name: name}); err == nil {
				_, _ = sqsc.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &u})
			}
		}
	}
	kmsc := e.KMS()
	if key, err := kmsc.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: &n.KMSKeyID}); err == nil {
		_, _ = kmsc.DeleteAlias(ctx, &kms.DeleteAliasInput{AliasName: &n.KMSKeyID})
		_, _ = kmsc.ScheduleKeyDeletion(ctx, &kms.ScheduleKeyDeletionInput{KeyId: key.KeyMetadata.KeyId, PendingWindowInDays: aws.Int32(7)})
	}
}
