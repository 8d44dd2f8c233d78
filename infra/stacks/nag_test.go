package stacks

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// TestAwsSolutionsNagFindsNoUnsuppressedErrorsOrWarnings runs cdk-nag's
// AwsSolutions pack on the default stack. Every finding is either fixed in
// the resource or accepted with its reason next to it (nag.go); a new
// resource or grant that breaks a rule fails here. The pack reports
// through annotations, and an error annotation fails synthesis itself, so
// a failing synthesis is reported with its validation report's path.
func TestAwsSolutionsNagFindsNoUnsuppressedErrorsOrWarnings(t *testing.T) {
	app := newApp(t, map[string]any{"assetDir": placeholderAssets(t)})
	settings, err := LoadSettings(app.Node(), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	stack := NewPlatformStack(app, StackID(settings.Stage), &PlatformStackProps{Settings: settings})
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Reports: jsii.Bool(false)}), nil)
	var ann assertions.Annotations
	must(t, func() { ann = assertions.Annotations_FromStack(stack.Stack) })
	nag := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
	must(t, func() { ann.HasNoError(jsii.String("*"), nag) })
	must(t, func() { ann.HasNoWarning(jsii.String("*"), nag) })
}
