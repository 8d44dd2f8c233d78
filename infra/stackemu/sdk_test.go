package stackemu_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// The SDKs' own tests pass against the synthesized stack's front, as they
// pass against the local server: sdk/go/sdktest and sdk/typescript/test
// call PLATFORMAPI_URL, mint their credit tokens with the stack's secret
// (functions/local's mint-credit-token, BACKEND=aws, as the account owner)
// and fund wallets on the stack's chain (fund --data-dir, through its
// JSON-RPC). What a deployment does not have (an x402 facilitator of the
// test's, the local chain's test tokens and pool behind RPC_URL_1337) the
// tests skip by name. Several minutes: make stack-sdk-test runs it
// (STACK_SDK_TESTS=1), make test does not.
func TestTheSDKsTestsPassAgainstTheSynthesizedStack(t *testing.T) {
	if os.Getenv("STACK_SDK_TESTS") == "" {
		t.Skip("make stack-sdk-test runs the SDKs' tests through the stack")
	}
	tmpl, bin, rie := template(t)
	s := up(t, tmpl, bin, rie)
	root, err := filepath.Abs(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(t.TempDir(), "local")
	if out, err := command(root, "go", "build", "-o", local, "./functions/local").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	creds, err := s.AWS.Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var seed string
	for id, arn := range s.Physical {
		if strings.HasPrefix(id, "CreditTokenSeed") {
			seed = arn
		}
	}
	env := append(os.Environ(), "PLATFORMAPI_URL="+s.URL, "PLATFORMAPI_LOCAL_BIN="+local, "PLATFORMAPI_DATA_DIR="+built.chainDir,
		"BACKEND=aws", "CREDIT_TOKEN_SECRET_ARN="+seed, "AWS_ENDPOINT_URL="+aws.ToString(s.AWS.BaseEndpoint), "AWS_REGION="+s.AWS.Region,
		"AWS_ACCESS_KEY_ID="+creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+creds.SecretAccessKey, "AWS_SESSION_TOKEN="+creds.SessionToken)
	for _, sdk := range []struct {
		name, dir string
		args      []string
	}{
		{"go", "sdk/go/sdktest", []string{"go", "test", "-count=1", "-v", "-timeout", "15m", "./..."}},
		{"typescript", "sdk/typescript", []string{"node", "--test", "--test-reporter=spec", "test/client.test.js", "test/coverage.test.js", "test/wallets.test.js"}},
	} {
		t.Run(sdk.name, func(t *testing.T) {
			began := time.Now()
			cmd := command(filepath.Join(root, sdk.dir), sdk.args[0], sdk.args[1:]...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			t.Logf("%s in %s:\n%s", strings.Join(sdk.args, " "), time.Since(began).Round(time.Second), out)
			if err != nil {
				t.Fatalf("%s SDK tests through the stack: %v", sdk.name, err)
			}
		})
	}
	if d := denied(t, s, tmpl); len(d) > 0 {
		t.Errorf("calls refused by IAM: %v", d)
	}
	if t.Failed() {
		names, err := tmpl.FunctionNames()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			for _, line := range strings.Split(s.Logs(n), "\n") {
				if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, "timed out") || strings.Contains(line, "errorType") {
					t.Logf("%s: %s", n, line)
				}
			}
		}
	}
}

func command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	return cmd
}
