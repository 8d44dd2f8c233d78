package stackemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// resourceChecked are the services whose requests moto authorises against
// the resource they name. For every other service moto asks whether the
// action is allowed on "*", which a statement naming a table, key or secret
// never grants; such statements are loaded with Resource "*", so that what
// is enforced for them is the action, which is what a missing grant removes.
var resourceChecked = map[string]bool{"s3": true, "sqs": true}

// deployRoles creates the template's roles with their inline policies and
// the AWS::IAM::Policy resources attached to them, and records each role's
// name as its physical id (Ref) for Fn::GetAtt Arn.
func deployRoles(ctx context.Context, cfg aws.Config, name string, t *Template, res *resolver, physical map[string]string) error {
	client := iam.NewFromConfig(cfg)
	for _, id := range t.ofType("AWS::IAM::Role") {
		var trust any
		if _, err := t.prop(id, "AssumeRolePolicyDocument", &trust); err != nil {
			return err
		}
		doc, err := json.Marshal(trust)
		if err != nil {
			return err
		}
		role := roleName(name, id)
		// The stack's role names are its own: one that exists is this
		// create's, committed by an attempt the SDK retried after losing
		// its answer.
		var exists *iamtypes.EntityAlreadyExistsException
		if _, err := client.CreateRole(ctx, &iam.CreateRoleInput{RoleName: &role, AssumeRolePolicyDocument: aws.String(string(doc))}); err != nil && !errors.As(err, &exists) {
			return fmt.Errorf("stackemu: role %s: %w", id, err)
		}
		physical[id] = role
		var managed []any
		if _, err := t.prop(id, "ManagedPolicyArns", &managed); err != nil {
			return err
		}
		for _, m := range managed {
			arn, err := res.value(m)
			if err != nil {
				return fmt.Errorf("stackemu: role %s: %w", id, err)
			}
			if _, err := client.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: &role, PolicyArn: &arn}); err != nil {
				return fmt.Errorf("stackemu: role %s: %w", id, err)
			}
		}
		var inline []struct {
			PolicyName     string
			PolicyDocument map[string]any
		}
		if _, err := t.prop(id, "Policies", &inline); err != nil {
			return err
		}
		for _, p := range inline {
			if err := putRolePolicy(ctx, client, res, role, p.PolicyName, p.PolicyDocument); err != nil {
				return fmt.Errorf("stackemu: role %s: %w", id, err)
			}
		}
	}
	for _, id := range t.ofType("AWS::IAM::Policy") {
		var roles []any
		var doc map[string]any
		if _, err := t.prop(id, "Roles", &roles); err != nil {
			return err
		}
		if _, err := t.prop(id, "PolicyDocument", &doc); err != nil {
			return err
		}
		for _, r := range roles {
			role, err := res.value(r)
			if err != nil {
				return fmt.Errorf("stackemu: policy %s: %w", id, err)
			}
			if err := putRolePolicy(ctx, client, res, role, id, doc); err != nil {
				return fmt.Errorf("stackemu: policy %s: %w", id, err)
			}
		}
	}
	return nil
}

// roleName is a role's name in the emulator: IAM allows 64 characters.
func roleName(stack, id string) string {
	n := stack + "-" + id
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

func putRolePolicy(ctx context.Context, client *iam.Client, res *resolver, role, name string, doc map[string]any) error {
	rendered, err := renderPolicy(res, doc)
	if err != nil {
		return err
	}
	_, err = client.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: &role, PolicyName: &name, PolicyDocument: aws.String(rendered)})
	return err
}

// renderPolicy resolves a policy document's intrinsics and widens the
// resources of statements moto cannot check by resource (resourceChecked).
func renderPolicy(res *resolver, doc map[string]any) (string, error) {
	stmts, _ := doc["Statement"].([]any)
	out := make([]any, 0, len(stmts))
	for _, s := range stmts {
		st, ok := s.(map[string]any)
		if !ok {
			return "", fmt.Errorf("stackemu: policy statement %v", s)
		}
		copied := map[string]any{}
		for k, v := range st {
			copied[k] = v
		}
		if extra := implied(st); len(extra) > 0 {
			copied["Action"] = append(actionsOf(st), extra...)
		}
		for _, key := range []string{"Resource", "NotResource"} {
			v, ok := st[key]
			if !ok {
				continue
			}
			if !allResourceChecked(st) {
				copied[key] = "*"
				continue
			}
			list, isList := v.([]any)
			if !isList {
				list = []any{v}
			}
			resolved := make([]string, len(list))
			for i, item := range list {
				if resolved[i], ok = item.(string); ok {
					continue
				}
				r, err := res.value(item)
				if err != nil {
					return "", err
				}
				resolved[i] = r
			}
			copied[key] = resolved
		}
		out = append(out, copied)
	}
	raw, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": out})
	return string(raw), err
}

// impliedActions are actions moto checks that IAM does not have: AWS
// authorises DynamoDB's TransactWriteItems by the PutItem, UpdateItem,
// DeleteItem and ConditionCheckItem of its items, TransactGetItems by
// GetItem, and SQS's batch calls by the single call's action. A statement
// allowing what AWS would check is also given moto's name for the call
// (moto cannot see which items a transaction holds, so all four).
var impliedActions = []struct {
	action string
	by     []string
}{
	{"dynamodb:TransactWriteItems", []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}},
	{"dynamodb:TransactGetItems", []string{"dynamodb:GetItem"}},
	{"sqs:SendMessageBatch", []string{"sqs:SendMessage"}},
	{"sqs:DeleteMessageBatch", []string{"sqs:DeleteMessage"}},
	{"sqs:ChangeMessageVisibilityBatch", []string{"sqs:ChangeMessageVisibility"}},
}

// implied lists the impliedActions a statement allows.
func implied(st map[string]any) []any {
	has := map[string]bool{}
	for _, a := range actionsOf(st) {
		s, _ := a.(string)
		has[s] = true
	}
	var out []any
	for _, ia := range impliedActions {
		all := true
		for _, b := range ia.by {
			all = all && has[b]
		}
		if all && !has[ia.action] {
			out = append(out, ia.action)
		}
	}
	return out
}

func actionsOf(st map[string]any) []any {
	actions, ok := st["Action"].([]any)
	if !ok {
		actions = []any{st["Action"]}
	}
	return actions
}

// allResourceChecked: every action of the statement is of a service whose
// requests moto checks against their resource.
func allResourceChecked(st map[string]any) bool {
	for _, a := range actionsOf(st) {
		s, _ := a.(string)
		service, _, _ := strings.Cut(s, ":")
		if !resourceChecked[service] {
			return false
		}
	}
	return true
}

// assumeRole returns a configuration calling as the role, with the
// temporary credentials STS gives Lambda for a function's execution role.
func assumeRole(ctx context.Context, cfg aws.Config, account, role, session string) (aws.Config, aws.Credentials, error) {
	if len(session) > 64 {
		session = session[:64]
	}
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{
		RoleArn: aws.String("arn:aws:iam::" + account + ":role/" + role), RoleSessionName: &session,
	})
	if err != nil {
		return aws.Config{}, aws.Credentials{}, fmt.Errorf("stackemu: assume %s: %w", role, err)
	}
	c := out.Credentials
	creds := aws.Credentials{AccessKeyID: aws.ToString(c.AccessKeyId), SecretAccessKey: aws.ToString(c.SecretAccessKey), SessionToken: aws.ToString(c.SessionToken), Source: "AssumeRole"}
	as := cfg.Copy()
	as.Credentials = credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken)
	return as, creds, nil
}

// operator creates an IAM user allowed everything and returns a
// configuration calling as it: the account owner's access, for whoever
// drives the stack once IAM is enforced.
func operator(ctx context.Context, cfg aws.Config, name string) (aws.Config, error) {
	client := iam.NewFromConfig(cfg)
	user := name + "-operator"
	if _, err := client.CreateUser(ctx, &iam.CreateUserInput{UserName: &user}); err != nil {
		return aws.Config{}, fmt.Errorf("stackemu: operator: %w", err)
	}
	all := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
	if _, err := client.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: &user, PolicyName: aws.String("all"), PolicyDocument: &all}); err != nil {
		return aws.Config{}, fmt.Errorf("stackemu: operator: %w", err)
	}
	key, err := client.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: &user})
	if err != nil {
		return aws.Config{}, fmt.Errorf("stackemu: operator: %w", err)
	}
	op := cfg.Copy()
	op.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(key.AccessKey.AccessKeyId), aws.ToString(key.AccessKey.SecretAccessKey), "")
	return op, nil
}
