package stacks

import (
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"platformapi/shared/adapters/deploy"
)

// nagAllow records, on the construct and its children, that a cdk-nag
// AwsSolutions finding is accepted and why. The reason sits next to the
// resource it excuses, so changing the design means revisiting it;
// appliesTo narrows an IAM5 acceptance to the named wildcards (a new
// wildcard on the same role is still reported). The pack runs in
// TestAwsSolutionsNagFindsNoUnsuppressedErrorsOrWarnings.
func nagAllow(c constructs.IConstruct, rule, reason string, appliesTo ...any) {
	sup := &cdknag.NagPackSuppression{Id: jsii.String(rule), Reason: jsii.String(reason)}
	if len(appliesTo) > 0 {
		sup.AppliesTo = &appliesTo
	}
	cdknag.NagSuppressions_AddResourceSuppressions(c, &[]*cdknag.NagPackSuppression{sup}, jsii.Bool(true))
}

// nagBucketGrants are the wildcards of Bucket.grantRead/grantReadWrite,
// each on one data bucket (and its objects) only.
var nagBucketGrants = []any{
	"Action::s3:Abort*", "Action::s3:DeleteObject*", "Action::s3:GetBucket*",
	"Action::s3:GetObject*", "Action::s3:List*",
	&cdknag.RegexAppliesTo{Regex: jsii.String(`/^Resource::<(Files|Archives|Artifacts)Bucket[0-9A-F]{8}\.Arn>\/\*$/`)},
}

// apiAuthorization is why no route has an API Gateway authorizer.
const apiAuthorization = "Authorization is the application's: every route outside routes.Public (health, openapi.json, pricing, docs) needs a bearer API key, which the function checks against its hash in the table together with the route's scopes and the key's project (shared/api/enforce.go); key redemption takes a signed credit token instead. An API Gateway Lambda authorizer would repeat that lookup in a second invocation, adding latency and cost to every request."

// addNagSuppressions accepts the AwsSolutions findings this serverless
// design has on purpose; everything else the pack reports is fixed in the
// resources themselves (see README, "Infrastructure checks").
func (s *PlatformStack) addNagSuppressions() {
	// The catch-all route is the stack's child, not the API's (see route).
	for _, api := range []constructs.IConstruct{s.API, s.Node().FindChild(jsii.String("DefaultRoute"))} {
		nagAllow(api, "AwsSolutions-APIG4", apiAuthorization)
	}
	for _, secret := range []constructs.IConstruct{s.CreditTokenSecret, s.ArchiveSecret} {
		nagAllow(secret, "AwsSolutions-SMG4",
			"The secret seeds a signing key, not a credential for another system: an automatic rotation would silently invalidate every credit token not yet redeemed, or change the key that verifies exported archives, so it is rotated on purpose by the operator procedures in infra/RUNBOOK.md.")
	}
	nagAllow(s.AuditRollupDLQ, "AwsSolutions-SQS3",
		"This queue is itself a dead-letter queue: the on-failure destination of the audit rollup's stream event source mapping, which cdk-nag does not recognise as a redrive source. Nothing consumes it; an alarm watches its depth.")
	nagAllow(s.AuditIngestDLQ, "AwsSolutions-SQS3",
		"This queue is itself a dead-letter queue: the on-failure destination of the audit ingest's asynchronous invocations, which cdk-nag does not recognise as a redrive source. Nothing consumes it; an alarm watches its depth.")
	for _, f := range Functions {
		role := s.Functions[f.Name].Role()
		reason := "Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions, so Resource * is the only form AWS accepts."
		if f.Uses.Has(deploy.ConsumeAuditStream) {
			reason += " The stream event source's dynamodb:ListStreams has none either; reading records is granted on the table's stream alone."
		}
		nagAllow(role, "AwsSolutions-IAM5", reason, "Resource::*")
		if f.Uses.Has(deploy.UseFiles) || f.Uses.Has(deploy.UseArchives) || f.Uses.Has(deploy.UseArtifactsRead) || f.Uses.Has(deploy.UseArtifactsWrite) {
			nagAllow(role, "AwsSolutions-IAM5",
				"CDK's Bucket.grantRead/grantReadWrite action groups (object versions, attributes, multipart parts the SDK's upload manager needs) on one bucket's ARN and its objects: object keys are chosen at run time, so <bucket>/* is the narrowest resource. Which function may touch which bucket is asserted by TestFunctionsMayTouchOnlyWhatTheyUse.",
				nagBucketGrants...)
		}
	}
}
