// Command infra is the CDK app: `cdk synth` and `cdk deploy` run it through
// cdk.json. It only builds the app from settings and synthesizes; what gets
// deployed is decided in package stacks, where it is tested.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"platformapi/infra/stacks"
)

func main() {
	app := awscdk.NewApp(nil)
	settings, err := stacks.LoadSettings(app.Node(), os.LookupEnv)
	if err != nil {
		jsii.Close()
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(2)
	}
	// No Env: the stack is environment-agnostic, so account and region come
	// from the credentials `cdk deploy` runs with and synth needs none.
	stacks.NewPlatformStack(app, stacks.StackID(settings.Stage), &stacks.PlatformStackProps{Settings: settings})
	app.Synth(nil)
	jsii.Close()
}
