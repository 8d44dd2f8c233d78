package sdktest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	platform "github.com/platformapi/platformapi/sdk/go"

	"platformapi/shared/base/routes"
	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// tripper lets a test see and tamper with every exchange.
type tripper struct {
	next  http.RoundTripper
	after func(req *http.Request, res *http.Response) (*http.Response, error)
	mu    sync.Mutex
	seen  []*http.Request
	resps []*http.Response
}

func (t *tripper) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.seen = append(t.seen, req)
	t.mu.Unlock()
	res, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.resps = append(t.resps, res)
	t.mu.Unlock()
	if t.after != nil {
		return t.after(req, res)
	}
	return res, nil
}

func (t *tripper) requests(method, path string) []*http.Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*http.Request
	for _, r := range t.seen {
		if r.Method == method && r.URL.Path == path {
			out = append(out, r)
		}
	}
	return out
}

type fixture struct {
	target
	c      *platform.Client
	trip   *tripper
	slept  []time.Duration
	sleeps sync.Mutex
}

// target is the API under test: a fresh in-process server whose clock the
// test moves, or, with PLATFORMAPI_URL set, the API there (make
// stack-sdk-test: the synthesized stack's front), on the real clock.
type target struct {
	url string
	// token mints a first-key credit token for the target.
	token func(t *testing.T, credits int64) string
	// now is the target's clock; advance moves it (the real one: waits).
	now     func() time.Time
	advance func(ctx context.Context, d time.Duration) error
	// fund sends base units of asset to addr on the target's chain 1337.
	fund func(t *testing.T, addr common.Address, asset string, amount *big.Int)
	// external: the API is not one this test built, so it has only what a
	// deployment has (no x402 facilitator, chain 1337 by RPC_URL_1337
	// alone: its native coin, not the local chain's test tokens and pool).
	external bool
}

// setup is a real server and a client whose waits are recorded and move
// the server's clock.
func setup(t *testing.T, opts ...func(*platform.Options)) *fixture {
	return setupWith(t, apitest.Options{}, opts...)
}

// setupWith is setup on a server built with env (e.g. on the local chain);
// an external target is as it is.
func setupWith(t *testing.T, env apitest.Options, opts ...func(*platform.Options)) *fixture {
	f := &fixture{target: newTarget(t, env)}
	f.trip = &tripper{next: http.DefaultTransport}
	o := platform.Options{BaseURL: f.url, HTTPClient: &http.Client{Transport: f.trip},
		Sleep: func(ctx context.Context, d time.Duration) error {
			f.sleeps.Lock()
			f.slept = append(f.slept, d)
			f.sleeps.Unlock()
			return f.advance(ctx, d)
		}}
	for _, fn := range opts {
		fn(&o)
	}
	f.c = platform.New(o)
	return f
}

func newTarget(t *testing.T, env apitest.Options) target {
	if url := os.Getenv("PLATFORMAPI_URL"); url != "" {
		return externalTarget(t, url)
	}
	e := apitest.New(t, env)
	return target{url: e.URL, now: e.Clock.Now,
		token: func(_ *testing.T, credits int64) string { return e.Token(credits) },
		advance: func(ctx context.Context, d time.Duration) error {
			e.Clock.Advance(d)
			return ctx.Err()
		},
		fund: func(t *testing.T, addr common.Address, asset string, amount *big.Int) {
			if _, err := chaintest.Shared(t).Faucet().Fund(ctx(t), addr, asset, amount); err != nil {
				t.Fatal(err)
			}
		}}
}

// externalTarget is the API at url. PLATFORMAPI_LOCAL_BIN (functions/local)
// mints its credit tokens with the environment it is given (BACKEND=aws,
// CREDIT_TOKEN_SECRET_ARN, the emulator's endpoint and credentials) and
// funds on the chain kept in PLATFORMAPI_DATA_DIR through its JSON-RPC.
func externalTarget(t *testing.T, url string) target {
	bin := os.Getenv("PLATFORMAPI_LOCAL_BIN")
	if bin == "" {
		t.Fatal("PLATFORMAPI_URL needs PLATFORMAPI_LOCAL_BIN to mint credit tokens and fund addresses")
	}
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				t.Fatalf("%s %v: %v\n%s", bin, args, err, exit.Stderr)
			}
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		return strings.TrimSpace(string(out))
	}
	return target{url: url, now: time.Now, external: true,
		token: func(t *testing.T, credits int64) string {
			return run(t, "mint-credit-token", "--credits", strconv.FormatInt(credits, 10))
		},
		advance: func(ctx context.Context, d time.Duration) error {
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		fund: func(t *testing.T, addr common.Address, asset string, amount *big.Int) {
			decimals := map[string]int{"ETH": 18, "WETH": 18, "USDC": 6}[asset]
			whole := new(big.Rat).SetFrac(amount, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
			run(t, "fund", "--data-dir", os.Getenv("PLATFORMAPI_DATA_DIR"), "--address", addr.Hex(), "--asset", asset,
				"--amount", whole.FloatString(decimals))
		}}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return c
}

// root creates an account with credits through the SDK and returns a client
// calling with its root key.
func (f *fixture) root(t *testing.T, credits int64) (*platform.Client, platform.CreatedKey) {
	t.Helper()
	r, err := f.c.CreateAPIKey(ctx(t), platform.CreateKeyRequest{Label: "root"}, platform.WithCreditToken(f.token(t, credits)))
	if err != nil || !r.OK {
		t.Fatalf("first key: %v %+v", err, r.Error)
	}
	return f.c.WithAPIKey(r.Value.Secret), r.Value
}

// must takes a call's two results and, given the test, fails it unless the
// call succeeded: must(c.Op(...))(t).
func must[T any](r platform.Result[T], err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatalf("transport: %v", err)
		}
		if !r.OK {
			t.Fatalf("API error: %+v", r.Error)
		}
		return r.Value
	}
}

func TestMain(m *testing.M) { chaintest.Main(m) }

func TestEveryRouteOperationHasAnSDKMethod(t *testing.T) {
	client := reflect.TypeFor[*platform.Client]()
	want := map[string]bool{}
	for _, rt := range append(append([]routes.Route{}, routes.Public...), routes.Table...) {
		want[rt.ID] = true
		name, ok := platform.Operations[rt.ID]
		if !ok {
			t.Errorf("operation %s (%s %s) has no SDK method", rt.ID, rt.Method, rt.Path)
			continue
		}
		if _, ok := client.MethodByName(name); !ok {
			t.Errorf("operation %s names method %s, which *Client does not have", rt.ID, name)
		}
	}
	for id := range platform.Operations {
		if !want[id] {
			t.Errorf("SDK maps %s, which is not an operation of the route table", id)
		}
	}
}

func TestFirstKeyChildKeyAndProjectLifecycle(t *testing.T) {
	f := setup(t)
	root, created := f.root(t, 5)
	if !strings.HasPrefix(created.Secret, "sk_") && created.Secret == "" || created.ID == "" {
		t.Fatalf("first key %+v", created)
	}
	child := must(root.CreateAPIKey(ctx(t), platform.CreateKeyRequest{Label: "ci", Scopes: []string{"projects:read", "projects:write"}}))(t)
	if child.Secret == "" || child.Secret == created.Secret {
		t.Fatal("child key has no fresh secret")
	}
	c := f.c.WithAPIKey(child.Secret)
	p := must(c.CreateProject(ctx(t), platform.CreateProjectRequest{Name: "shop", Metadata: map[string]string{"team": "a"}}))(t)
	got := must(c.GetProject(ctx(t), p.ID))(t)
	if got.Name != "shop" || got.Metadata["team"] != "a" {
		t.Fatalf("read %+v", got)
	}
	name := "store"
	upd := must(c.UpdateProject(ctx(t), p.ID, platform.UpdateProjectRequest{Name: &name}))(t)
	if upd.Name != "store" {
		t.Fatalf("update %+v", upd)
	}
	arch := must(c.ArchiveProject(ctx(t), p.ID))(t)
	if arch.Status != "archived" {
		t.Fatalf("archive %+v", arch)
	}
	// The child lacks api_keys:manage: an ordinary API failure, no Go error.
	r, err := c.ListAPIKeys(ctx(t), platform.ListOptions{})
	if err != nil || r.OK || r.Status != 403 || r.Error.Code != "scope_denied" || r.Error.RequestID == "" || r.RequestID != r.Error.RequestID {
		t.Fatalf("missing scope: %v %+v %+v", err, r, r.Error)
	}
	// Revoking the child makes it unusable.
	must(root.RevokeAPIKey(ctx(t), child.ID))(t)
	if r, err := c.GetProject(ctx(t), p.ID); err != nil || r.OK || r.Status != 401 {
		t.Fatalf("revoked key answered %v %+v", err, r)
	}
}

// Rolling answers the successor with its secret and the rolled key, whose
// expiry is the one asked for; both keys work until then.
func TestARolledKeyAnswersItsSuccessorAndThePreviousKey(t *testing.T) {
	f := setup(t)
	root, _ := f.root(t, 1)
	child := must(root.CreateAPIKey(ctx(t), platform.CreateKeyRequest{Label: "ci"}))(t)
	until := f.now().Add(time.Hour).UTC().Truncate(time.Second)
	rolled := must(root.RollAPIKey(ctx(t), child.ID, platform.RollRequest{ExpiresAt: until}))(t)
	if rolled.Secret == "" || rolled.Secret == child.Secret || rolled.ID == child.ID || rolled.PreviousKey == nil ||
		rolled.PreviousKey.ID != child.ID || rolled.PreviousKey.ExpiresAt == nil || !rolled.PreviousKey.ExpiresAt.Equal(until) {
		t.Fatalf("rolled %+v, previous %+v", rolled, rolled.PreviousKey)
	}
	for _, secret := range []string{child.Secret, rolled.Secret} {
		must(f.c.WithAPIKey(secret).Balance(ctx(t)))(t)
	}
}

func TestValidationFailuresCarryFieldErrors(t *testing.T) {
	f := setup(t)
	root, _ := f.root(t, 1)
	r, err := root.CreateProject(ctx(t), platform.CreateProjectRequest{Name: ""})
	if err != nil || r.OK || r.Error == nil || len(r.Error.Errors) == 0 || r.Error.Status != r.Status {
		t.Fatalf("empty name: %v %+v", err, r.Error)
	}
	if !strings.Contains(r.Error.Errors[0].Location, "name") {
		t.Fatalf("field errors %+v", r.Error.Errors)
	}
}

func TestInvokeChargesTheReportedCredits(t *testing.T) {
	f := setup(t)
	root, _ := f.root(t, 1)
	in, _ := json.Marshal(map[string]any{"text": "remember me"})
	inv := must(root.Invoke(ctx(t), "cloud-superbrain", platform.InvokeRequest{OperationID: "memory.write", Input: in}))(t)
	var result struct {
		MemoryID string `json:"memoryId"`
	}
	if err := json.Unmarshal(inv.Result, &result); err != nil || result.MemoryID == "" || inv.Status != "succeeded" {
		t.Fatalf("invoke %+v (%v)", inv, err)
	}
	if inv.ChargedCredits.String() != "0.01" {
		t.Fatalf("charged %s", inv.ChargedCredits)
	}
	if b := must(root.Balance(ctx(t)))(t); b.Balance.String() != "0.99" {
		t.Fatalf("balance %s", b.Balance)
	}
	// The ledger explains the balance: newest first, the capture, the hold
	// and the grant, the newest ending at the balance.
	var types []string
	for e, err := range root.AllLedgerEntries(ctx(t), platform.LedgerOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(types) == 0 && e.BalanceAfter != "0.99" {
			t.Fatalf("newest entry %+v", e)
		}
		types = append(types, e.Type)
	}
	if strings.Join(types, ",") != "capture,hold,grant" {
		t.Fatalf("ledger %v", types)
	}
}

func TestTheIteratorFollowsNextCursorAcrossPages(t *testing.T) {
	f := setup(t)
	root, _ := f.root(t, 1)
	want := map[string]bool{}
	for i := range 5 {
		p := must(root.CreateProject(ctx(t), platform.CreateProjectRequest{Name: fmt.Sprintf("p%d", i)}))(t)
		want[p.ID] = true
	}
	got := map[string]bool{}
	for p, err := range root.AllProjects(ctx(t), platform.ListOptions{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if got[p.ID] {
			t.Fatalf("%s twice", p.ID)
		}
		got[p.ID] = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("iterated %v, want %v", got, want)
	}
	if n := len(f.trip.requests("GET", "/v1/projects")); n != 3 {
		t.Fatalf("%d pages fetched, want 3", n)
	}
	// Any list method pages the same way, filters kept on every page.
	for i := range 3 {
		must(root.UploadFile(ctx(t), platform.Upload{Name: fmt.Sprintf("f%d", i), Purpose: "cv", Body: strings.NewReader("x")}))(t)
	}
	must(root.UploadFile(ctx(t), platform.Upload{Name: "other", Purpose: "tax", Body: strings.NewReader("x")}))(t)
	n := 0
	for file, err := range platform.Each(ctx(t), platform.FileListOptions{ListOptions: platform.ListOptions{Limit: 1}, Purpose: "cv"}, root.ListFiles) {
		if err != nil || file.Purpose == nil || *file.Purpose != "cv" {
			t.Fatalf("%v %+v", err, file)
		}
		n++
	}
	if sent := f.trip.requests("GET", "/v1/files"); n != 3 || len(sent) != 3 || sent[2].URL.Query().Get("purpose") != "cv" || sent[2].URL.Query().Get("cursor") == "" {
		t.Fatalf("%d files in %d pages", n, len(sent))
	}
	// Breaking out early fetches no more pages.
	for range root.AllProjects(ctx(t), platform.ListOptions{Limit: 2}) {
		break
	}
	if n := len(f.trip.requests("GET", "/v1/projects")); n != 4 {
		t.Fatalf("%d pages fetched after an early break, want 4", n)
	}
}

func TestAnIteratorYieldsAnAPIFailureOnceAndStops(t *testing.T) {
	f := setup(t)
	n := 0
	for _, err := range f.c.WithAPIKey("sk_unknown").AllProjects(ctx(t), platform.ListOptions{}) {
		n++
		var apiErr *platform.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 401 {
			t.Fatalf("got %v", err)
		}
	}
	if n != 1 {
		t.Fatalf("yielded %d times", n)
	}
}

// A response lost after the server committed: the retry carries the same
// Idempotency-Key, is answered from the idempotency store, and the project
// exists once.
func TestALostResponseIsRetriedUnderTheSameIdempotencyKey(t *testing.T) {
	var dropped atomic.Bool
	f := setup(t)
	f.trip.after = func(req *http.Request, res *http.Response) (*http.Response, error) {
		if req.Method == "POST" && req.URL.Path == "/v1/projects" && dropped.CompareAndSwap(false, true) {
			res.Body.Close()
			return nil, errors.New("connection reset by peer")
		}
		return res, nil
	}
	root, _ := f.root(t, 1)
	r, err := root.CreateProject(ctx(t), platform.CreateProjectRequest{Name: "once"})
	if err != nil || !r.OK || !r.Replayed || r.Attempts != 2 || r.IdempotencyKey == "" {
		t.Fatalf("retry: %v %+v", err, r)
	}
	sent := f.trip.requests("POST", "/v1/projects")
	if len(sent) != 2 || sent[0].Header.Get("Idempotency-Key") != r.IdempotencyKey || sent[1].Header.Get("Idempotency-Key") != r.IdempotencyKey {
		t.Fatalf("keys sent: %d requests", len(sent))
	}
	if f.trip.resps[len(f.trip.resps)-2].StatusCode != 201 {
		t.Fatal("the dropped attempt did not succeed on the server")
	}
	n := 0
	for p, err := range root.AllProjects(ctx(t), platform.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if p.Name == "once" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d projects created, want 1", n)
	}
	// Two logical calls get two keys.
	r2 := must(root.CreateProject(ctx(t), platform.CreateProjectRequest{Name: "twice"}))(t)
	if last := f.trip.requests("POST", "/v1/projects"); last[2].Header.Get("Idempotency-Key") == r.IdempotencyKey || r2.ID == r.Value.ID {
		t.Fatal("a new logical call reused the key")
	}
}

func TestACallerChosenIdempotencyKeyReplays(t *testing.T) {
	f := setup(t)
	root, _ := f.root(t, 1)
	k := platform.NewIdempotencyKey()
	a := must(root.CreateProject(ctx(t), platform.CreateProjectRequest{Name: "x"}, platform.WithIdempotencyKey(k)))(t)
	r, err := root.CreateProject(ctx(t), platform.CreateProjectRequest{Name: "x"}, platform.WithIdempotencyKey(k))
	if err != nil || !r.OK || !r.Replayed || r.Value.ID != a.ID || r.IdempotencyKey != k {
		t.Fatalf("replay %v %+v", err, r)
	}
}

func TestA429IsRetriedAfterItsRetryAfter(t *testing.T) {
	f := setup(t)
	root, _ := f.root(t, 1)
	one := int64(1)
	limited := must(root.CreateAPIKey(ctx(t), platform.CreateKeyRequest{Label: "slow", Limits: map[string]platform.Limit{"credits.balance.read": {RequestsPerMinute: &one}}}))(t)
	c := f.c.WithAPIKey(limited.Secret)
	must(c.Balance(ctx(t)))(t)
	r, err := c.Balance(ctx(t))
	if err != nil || !r.OK || r.Attempts != 2 {
		t.Fatalf("after the window: %v %+v", err, r)
	}
	var throttled *http.Response
	for _, res := range f.trip.resps {
		if res.StatusCode == 429 {
			throttled = res
		}
	}
	if throttled == nil {
		t.Fatal("no 429 was seen")
	}
	ra, _ := strconv.Atoi(throttled.Header.Get("Retry-After"))
	if ra < 1 || len(f.slept) != 1 || f.slept[0] < time.Duration(ra)*time.Second {
		t.Fatalf("Retry-After %ds, slept %v", ra, f.slept)
	}
	// With one attempt allowed the 429 is the result, not a Go error.
	strict := platform.New(platform.Options{BaseURL: f.url, APIKey: limited.Secret, MaxAttempts: 1})
	r, err = strict.Balance(ctx(t))
	if err != nil || r.OK || r.Status != 429 || r.Error.Code != "limit_exceeded" || r.Error.RetryAfter < time.Second {
		t.Fatalf("single attempt: %v %+v %+v", err, r, r.Error)
	}
}

func TestARetryAfterBeyondTheDeadlineAnswersTheFailure(t *testing.T) {
	f := setup(t)
	root, _ := f.root(t, 1)
	one := int64(1)
	limited := must(root.CreateAPIKey(ctx(t), platform.CreateKeyRequest{Label: "slow", Limits: map[string]platform.Limit{"credits.balance.read": {RequestsPerMinute: &one}}}))(t)
	c := f.c.WithAPIKey(limited.Secret)
	must(c.Balance(ctx(t)))(t)
	// Shorter than any Retry-After (whole seconds, at least 1), wherever
	// the test clock stands in the minute window.
	short, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r, err := c.Balance(short)
	if err != nil || r.OK || r.Status != 429 || r.Attempts != 1 {
		t.Fatalf("%v %+v", err, r)
	}
}

func TestTransportFailuresBecomeAGoErrorAfterMaxAttempts(t *testing.T) {
	f := setup(t, func(o *platform.Options) { o.MaxAttempts = 4 })
	var calls atomic.Int32
	f.trip.after = func(req *http.Request, res *http.Response) (*http.Response, error) {
		calls.Add(1)
		res.Body.Close()
		return nil, errors.New("network unreachable")
	}
	r, err := f.c.Health(ctx(t))
	if err == nil || !strings.Contains(err.Error(), "network unreachable") || r.Attempts != 4 || calls.Load() != 4 || len(f.slept) != 3 {
		t.Fatalf("err %v, attempts %d, calls %d, slept %v", err, r.Attempts, calls.Load(), f.slept)
	}
	for i, d := range f.slept {
		if d < 0 || d > 200*time.Millisecond<<i {
			t.Fatalf("wait %d = %v beyond the full-jitter ceiling", i, d)
		}
	}
}

func TestTopUpPaysTheChallengeWithTheCallersSigner(t *testing.T) {
	f := setup(t)
	if f.external {
		t.Skip("the API under test has no x402 facilitator of this test's")
	}
	root, _ := f.root(t, 1)
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	var asked []platform.PaymentRequirements
	eth := ethereumSigner(key, f.now)
	signer := platform.SignerFunc(func(ctx context.Context, req platform.PaymentRequirements) (platform.ExactPayload, error) {
		asked = append(asked, req)
		return eth.SignPayment(ctx, req)
	})
	r, err := root.TopUp(ctx(t), "12.34", signer)
	if err != nil || !r.OK {
		t.Fatalf("top-up %v %+v", err, r.Error)
	}
	if r.Value.CreditedCredits.String() != "1234" || r.Value.Balance.String() != "1235" || !strings.HasPrefix(r.Value.ReceiptID, "rcpt_") || !r.Value.Settlement.Success {
		t.Fatalf("receipt %+v", r.Value)
	}
	if len(asked) != 1 || asked[0].Amount != "12340000" || asked[0].PayTo != apitest.TopUpConfig.PayTo {
		t.Fatalf("signer asked %+v", asked)
	}
	sent := f.trip.requests("POST", "/v1/credits/x402/top-up")
	if len(sent) != 2 || sent[0].Header.Get("Idempotency-Key") != sent[1].Header.Get("Idempotency-Key") || sent[1].Header.Get("Payment-Signature") == "" {
		t.Fatal("the paid retry did not reuse the challenge's Idempotency-Key")
	}
	// Repeating the logical call replays: nothing is signed or credited twice.
	again, err := root.TopUp(ctx(t), "12.34", signer, platform.WithIdempotencyKey(r.IdempotencyKey))
	if err != nil || !again.OK || !again.Replayed || len(asked) != 1 {
		t.Fatalf("replay %v %+v", err, again)
	}
	if b := must(root.Balance(ctx(t)))(t); b.Balance.String() != "1235" {
		t.Fatalf("balance %s", b.Balance)
	}
	// A signer failure is the caller's error.
	_, err = root.TopUp(ctx(t), "5", platform.SignerFunc(func(context.Context, platform.PaymentRequirements) (platform.ExactPayload, error) {
		return platform.ExactPayload{}, errors.New("wallet locked")
	}))
	if err == nil || !strings.Contains(err.Error(), "wallet locked") {
		t.Fatalf("signer failure: %v", err)
	}
}

func TestAFileRoundTripsThroughUploadAndStreamedDownload(t *testing.T) {
	f := setup(t)
	root, _ := f.root(t, 1)
	p := must(root.CreateProject(ctx(t), platform.CreateProjectRequest{Name: "docs"}))(t)
	data := bytes.Repeat([]byte("platform "), 10_000)
	sum := sha256.Sum256(data)
	up := must(root.UploadFile(ctx(t), platform.Upload{Name: "résumé.txt", ContentType: "text/plain", Purpose: "cv", SHA256: hex.EncodeToString(sum[:]),
		Body: bytes.NewReader(data)}, platform.WithProject(p.ID)))(t)
	if up.Filename != "résumé.txt" || up.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("uploaded %+v", up)
	}
	d := must(root.DownloadFile(ctx(t), up.ID, platform.WithProject(p.ID)))(t)
	got, err := io.ReadAll(d.Body)
	d.Body.Close()
	if err != nil || !bytes.Equal(got, data) || d.SHA256 != up.SHA256 || !strings.HasPrefix(d.ContentType, "text/plain") {
		t.Fatalf("download: %v, %d bytes, sha %s, type %s", err, len(got), d.SHA256, d.ContentType)
	}
	listed := must(root.ListFiles(ctx(t), platform.FileListOptions{Purpose: "cv"}, platform.WithProject(p.ID)))(t)
	if len(listed.Data) != 1 || listed.Data[0].ID != up.ID {
		t.Fatalf("listed %+v", listed.Data)
	}
	must(root.DeleteFile(ctx(t), up.ID, platform.WithProject(p.ID)))(t)
	r, err := root.DownloadFile(ctx(t), up.ID, platform.WithProject(p.ID))
	if err != nil || r.OK || r.Status != 404 || r.Value != nil {
		t.Fatalf("deleted file: %v %+v", err, r)
	}
	// A wrong checksum is refused and stores nothing.
	bad, err := root.UploadFile(ctx(t), platform.Upload{Name: "a.txt", SHA256: strings.Repeat("0", 64), Body: strings.NewReader("x")}, platform.WithProject(p.ID))
	if err != nil || bad.OK || bad.Error.Code != "checksum_mismatch" {
		t.Fatalf("bad checksum: %v %+v", err, bad.Error)
	}
}

// GET / answers where to start, under /v1 as every public route.
func TestTheIndexPointsAtTheDocs(t *testing.T) {
	f := setup(t)
	idx := must(f.c.Index(ctx(t)))(t)
	if idx.Docs != "/docs" || idx.OpenAPI != "/openapi.json" || idx.Health != "/health" {
		t.Fatalf("index %+v", idx)
	}
}

func TestDeprecationHeadersReachTheHook(t *testing.T) {
	type seen struct{ op, dep, sunset, link string }
	var got []seen
	f := setup(t, func(o *platform.Options) {
		o.OnDeprecation = func(op, dep, sunset, link string) { got = append(got, seen{op, dep, sunset, link}) }
	})
	f.trip.after = func(req *http.Request, res *http.Response) (*http.Response, error) {
		if req.URL.Path == "/v1/health" {
			res.Header.Set("Deprecation", "@1767225600")
			res.Header.Set("Sunset", "Thu, 01 Jul 2027 00:00:00 GMT")
			res.Header.Set("Link", `</v1/status>; rel="successor-version"`)
		}
		return res, nil
	}
	must(f.c.Health(ctx(t)))(t)
	must(f.c.Pricing(ctx(t)))(t)
	want := []seen{{"health.read", "@1767225600", "Thu, 01 Jul 2027 00:00:00 GMT", `</v1/status>; rel="successor-version"`}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("hook saw %+v", got)
	}
}
