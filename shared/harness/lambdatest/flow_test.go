package lambdatest

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/awsenv/provision"
	"platformapi/shared/domain/audit"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/platform"
)

// awsFunctions provisions one set of emulator resources and returns the
// environment every function of a test shares, plus a signer holding the
// same credit-token key as the keys function.
func awsFunctions(t *testing.T) (env []string, signer *credittoken.Signer) {
	t.Helper()
	e := awstest.Env(t)
	ctx := awstest.Context(t)
	name := awstest.Name(t, "fn")
	queues, err := platform.Queues()
	if err != nil {
		t.Fatal(err)
	}
	e.Names = awsenv.Names{
		Table: name, FilesBucket: name + "-files", ArchivesBucket: name + "-archives", ArtifactsBucket: name + "-artifacts",
		Queues: awsenv.QueueNames(name, queues), KMSKeyID: "alias/" + name,
	}
	if err := provision.Create(ctx, e, queues); err != nil {
		t.Fatal(err)
	}
	secretValue := strings.Repeat("s3cr3t", 11)
	sec, err := secretsmanager.NewFromConfig(e.Config).CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: &name, SecretString: &secretValue})
	if err != nil {
		t.Fatal(err)
	}
	archiveName, archiveValue := name+"-archive", strings.Repeat("4rch1v3", 10)
	archive, err := secretsmanager.NewFromConfig(e.Config).CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: &archiveName, SecretString: &archiveValue})
	if err != nil {
		t.Fatal(err)
	}
	seed := sha256.Sum256([]byte(secretValue))
	signer, err = credittoken.NewSigner(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	env = []string{
		"AWS_ENDPOINT_URL=" + os.Getenv("AWS_ENDPOINT_URL"), "AWS_CALL_TIMEOUT=" + os.Getenv("AWS_CALL_TIMEOUT"), "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing",
		"TABLE_NAME=" + name, "KMS_KEY_ID=alias/" + name,
		"CREDIT_TOKEN_SECRET_ARN=" + *sec.ARN, "ARTIFACTS_BUCKET=" + e.Names.ArtifactsBucket,
		"FILES_BUCKET=" + e.Names.FilesBucket, "ARCHIVES_BUCKET=" + e.Names.ArchivesBucket,
		"ARCHIVE_SIGNING_SECRET_ARN=" + *archive.ARN,
	}
	// Every function is told every queue's URL, as CDK tells each the
	// queues it uses.
	for _, q := range queues {
		url, err := e.QueueURL(ctx, e.Names.Queue(q))
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, awsenv.QueueURLEnv(q)+"="+url)
	}
	return env, signer
}

func withHeader(ev events.APIGatewayV2HTTPRequest, name, value string) events.APIGatewayV2HTTPRequest {
	h := map[string]string{}
	for k, v := range ev.Headers {
		h[k] = v
	}
	h[name] = value
	ev.Headers = h
	return ev
}

// TestFunctionsShareOneAccountThroughDynamoDB runs the real keys, credits and
// projects binaries on one table: the first key made by one function works
// in the others at once, and idempotency holds across invocations.
func TestFunctionsShareOneAccountThroughDynamoDB(t *testing.T) {
	env, signer := awsFunctions(t)
	keysFn := start(t, "keys", env)
	creditsFn := start(t, "credits", env)
	projectsFn := start(t, "projects", env)

	tok, err := signer.Mint(7_000_000, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	created := invoke(t, keysFn, withHeader(fixture(t, "keys-create-first.json"), "x-service-credit-token", tok))
	checkAnswer(t, created, 201, "")
	var key struct{ Secret string }
	if err := json.Unmarshal(created.body, &key); err != nil || !strings.HasPrefix(key.Secret, "psk_") {
		t.Fatalf("create key: %s", created.body)
	}
	bearer := "Bearer " + key.Secret

	bal := invoke(t, creditsFn, withHeader(fixture(t, "credits-balance.json"), "authorization", bearer))
	checkAnswer(t, bal, 200, "")
	if !strings.Contains(string(bal.body), `"balance":7`) {
		t.Fatalf("balance: %s", bal.body)
	}
	// The request's audit event leaves in its one access line, whole, for
	// the log subscription to carry to audit-ingest: no third round trip.
	var lines []string
	for try := 0; try < 100 && len(lines) == 0; try++ { // the output pipe is read as it comes
		time.Sleep(10 * time.Millisecond)
		for _, l := range strings.Split(creditsFn.Logs(), "\n") {
			if strings.Contains(l, `"requestId":"`+bal.header("X-Request-Id")+`"`) {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d log lines for the request, want one: %q", len(lines), lines)
	}
	if ev, _, ok := audit.Shipped(lines[0]); !ok || ev.RequestID != bal.header("X-Request-Id") || ev.Operation != "credits.balance.read" || ev.Status != 200 {
		t.Fatalf("the access line carries no whole audit event: %s (%+v)", lines[0], ev)
	}
	// A plain read's event adds only the marker: its time is the line's.
	if !strings.Contains(lines[0], `"au":1`) || strings.Contains(lines[0], `"audit"`) {
		t.Fatalf("a plain read's access line carries more than the audit marker: %s", lines[0])
	}

	create := withHeader(fixture(t, "projects-create.json"), "authorization", bearer)
	first := invoke(t, projectsFn, create)
	checkAnswer(t, first, 201, "")
	again := invoke(t, projectsFn, create)
	checkAnswer(t, again, 201, "")
	if again.header("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
		t.Fatalf("a redelivered create was not replayed: %s", again.body)
	}
	list := invoke(t, projectsFn, withHeader(fixture(t, "projects-list.json"), "authorization", bearer))
	checkAnswer(t, list, 200, "")
	var page struct{ Data []map[string]any }
	if err := json.Unmarshal(list.body, &page); err != nil || len(page.Data) != 1 || page.Data[0]["name"] != "from-lambda" {
		t.Fatalf("list: %s", list.body)
	}

	// A second redemption of the token, through the function, is refused.
	second := withHeader(fixture(t, "keys-create-first.json"), "x-service-credit-token", tok)
	second = withHeader(second, "idempotency-key", "first-key-fixture-002")
	checkAnswer(t, invoke(t, keysFn, second), 401, "invalid_credit_token")
}
