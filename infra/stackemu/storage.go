package stackemu

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// storageTypes are created through the emulator's CloudFormation, as the
// deploy rehearsal does; the rest of the template is emulated here.
var storageTypes = map[string]bool{
	"AWS::DynamoDB::Table": true, "AWS::S3::Bucket": true, "AWS::SQS::Queue": true, "AWS::KMS::Key": true,
}

// secretType is created through Secrets Manager: moto's CloudFormation
// cannot create secrets.
const secretType = "AWS::SecretsManager::Secret"

// deployStorage creates the template's storage resources as one stack and
// its secrets, and returns every created resource's physical id.
func deployStorage(ctx context.Context, cfg aws.Config, name string, t *Template) (map[string]string, error) {
	storage := map[string]any{}
	for id, r := range t.Resources {
		if !storageTypes[r.Type] {
			continue
		}
		props := map[string]json.RawMessage{}
		for k, v := range r.Properties {
			if k != "Tags" { // nothing reads them; moto mishandles KMS key tags
				props[k] = v
			}
		}
		storage[id] = map[string]any{"Type": r.Type, "Properties": props}
	}
	body, err := json.Marshal(map[string]any{"AWSTemplateFormatVersion": "2010-09-09", "Resources": storage})
	if err != nil {
		return nil, err
	}
	cfn := cloudformation.NewFromConfig(cfg)
	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: &name, TemplateBody: aws.String(string(body))}); err != nil {
		return nil, fmt.Errorf("stackemu: create stack: %w", err)
	}
	for {
		out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: &name})
		if err != nil {
			return nil, fmt.Errorf("stackemu: describe stack: %w", err)
		}
		status := string(out.Stacks[0].StackStatus)
		if status == string(cfntypes.StackStatusCreateComplete) {
			break
		}
		if strings.HasSuffix(status, "FAILED") || strings.HasSuffix(status, "COMPLETE") {
			return nil, fmt.Errorf("stackemu: storage stack %s: %s", name, status)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	physical := map[string]string{}
	var next *string
	for {
		out, err := cfn.ListStackResources(ctx, &cloudformation.ListStackResourcesInput{StackName: &name, NextToken: next})
		if err != nil {
			return nil, fmt.Errorf("stackemu: list stack resources: %w", err)
		}
		for _, s := range out.StackResourceSummaries {
			physical[aws.ToString(s.LogicalResourceId)] = aws.ToString(s.PhysicalResourceId)
		}
		if next = out.NextToken; next == nil {
			break
		}
	}
	sm := secretsmanager.NewFromConfig(cfg)
	for _, id := range t.ofType(secretType) {
		var gen struct {
			PasswordLength     int64
			ExcludePunctuation bool
			ExcludeCharacters  string
		}
		gen.PasswordLength = 32
		if _, err := t.prop(id, "GenerateSecretString", &gen); err != nil {
			return nil, err
		}
		pw, err := sm.GetRandomPassword(ctx, &secretsmanager.GetRandomPasswordInput{
			PasswordLength: &gen.PasswordLength, ExcludePunctuation: &gen.ExcludePunctuation, ExcludeCharacters: &gen.ExcludeCharacters,
		})
		if err != nil {
			return nil, fmt.Errorf("stackemu: secret %s: %w", id, err)
		}
		sec, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(name + "-" + id), SecretString: pw.RandomPassword})
		if err != nil {
			return nil, fmt.Errorf("stackemu: secret %s: %w", id, err)
		}
		physical[id] = aws.ToString(sec.ARN)
	}
	return physical, nil
}

// attributes answers Ref and Fn::GetAtt for created resources the way
// CloudFormation does, asking the services for what the physical id lacks.
// An answer is asked once: every function's environment names the same
// table, queues and key, and the emulator serves one call at a time.
type attributes struct {
	cfg      aws.Config
	t        *Template
	physical map[string]string
	region   string
	account  string

	mu    sync.Mutex
	known map[string]string // by "Ref id" or "GetAtt id.attr"
}

// once answers what from the cache, or by ask, whose answer it keeps.
func (a *attributes) once(what string, ask func() (string, error)) (string, error) {
	a.mu.Lock()
	v, ok := a.known[what]
	a.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := ask()
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	if a.known == nil {
		a.known = map[string]string{}
	}
	a.known[what] = v
	a.mu.Unlock()
	return v, nil
}

func (a *attributes) ref(id string) (string, error) {
	return a.once("Ref "+id, func() (string, error) { return a.askRef(id) })
}

func (a *attributes) getAtt(id, attr string) (string, error) {
	return a.once("GetAtt "+id+"."+attr, func() (string, error) { return a.askGetAtt(id, attr) })
}

func (a *attributes) askRef(id string) (string, error) {
	r, ok := a.t.Resources[id]
	if !ok {
		return "", fmt.Errorf("stackemu: Ref to unknown resource %s", id)
	}
	p, ok := a.physical[id]
	if !ok {
		return "", fmt.Errorf("stackemu: Ref to %s (%s), which is not created here", id, r.Type)
	}
	if r.Type == "AWS::SQS::Queue" && !strings.HasPrefix(p, "http") {
		out, err := sqs.NewFromConfig(a.cfg).GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: &p})
		if err != nil {
			return "", fmt.Errorf("stackemu: queue %s: %w", id, err)
		}
		return aws.ToString(out.QueueUrl), nil
	}
	return p, nil
}

func (a *attributes) askGetAtt(id, attr string) (string, error) {
	ctx := context.Background()
	r := a.t.Resources[id]
	switch r.Type + "." + attr {
	case "AWS::SQS::Queue.Arn", "AWS::SQS::Queue.QueueName":
		url, err := a.ref(id)
		if err != nil {
			return "", err
		}
		out, err := sqs.NewFromConfig(a.cfg).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		if err != nil {
			return "", fmt.Errorf("stackemu: queue %s: %w", id, err)
		}
		arn := out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
		if attr == "QueueName" {
			return arn[strings.LastIndex(arn, ":")+1:], nil
		}
		return arn, nil
	case "AWS::DynamoDB::Table.Arn", "AWS::DynamoDB::Table.StreamArn":
		out, err := dynamodb.NewFromConfig(a.cfg).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(a.physical[id])})
		if err != nil {
			return "", fmt.Errorf("stackemu: table %s: %w", id, err)
		}
		if attr == "Arn" {
			return aws.ToString(out.Table.TableArn), nil
		}
		return aws.ToString(out.Table.LatestStreamArn), nil
	case "AWS::S3::Bucket.Arn":
		return "arn:aws:s3:::" + a.physical[id], nil
	case "AWS::KMS::Key.Arn":
		// ListKeys, not DescribeKey: moto fails DescribeKey on a key its
		// CloudFormation created.
		p := kms.NewListKeysPaginator(kms.NewFromConfig(a.cfg), &kms.ListKeysInput{})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				return "", fmt.Errorf("stackemu: key %s: %w", id, err)
			}
			for _, k := range out.Keys {
				if aws.ToString(k.KeyId) == a.physical[id] {
					return aws.ToString(k.KeyArn), nil
				}
			}
		}
		return "", fmt.Errorf("stackemu: key %s (%s) not found", id, a.physical[id])
	case "AWS::Lambda::Function.Arn":
		return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", a.region, a.account, a.physical[id]), nil
	case "AWS::IAM::Role.Arn":
		return fmt.Sprintf("arn:aws:iam::%s:role/%s", a.account, a.physical[id]), nil
	case "AWS::SecretsManager::Secret.Arn":
		return a.physical[id], nil
	}
	return "", fmt.Errorf("stackemu: Fn::GetAtt %s.%s (%s) is not supported", id, attr, r.Type)
}
