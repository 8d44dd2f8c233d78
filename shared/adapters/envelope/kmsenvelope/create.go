package kmsenvelope

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// CreateKey makes sure alias (alias/...) names a symmetric encryption key,
// creating both if needed, and returns the key id. On real AWS the CDK stack
// owns the key; this serves LocalStack, moto and tests.
func CreateKey(ctx context.Context, client *kms.Client, alias string) (string, error) {
	if !strings.HasPrefix(alias, "alias/") {
		return "", fmt.Errorf("kmsenvelope: %q is not an alias/... name", alias)
	}
	got, err := client.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: &alias})
	var nf *types.NotFoundException
	switch {
	case err == nil:
		return *got.KeyMetadata.KeyId, nil
	case !errors.As(err, &nf):
		return "", fmt.Errorf("kmsenvelope: describe %s: %w", alias, err)
	}
	key, err := client.CreateKey(ctx, &kms.CreateKeyInput{
		KeySpec: types.KeySpecSymmetricDefault, KeyUsage: types.KeyUsageTypeEncryptDecrypt,
		Description: &alias,
	})
	if err != nil {
		return "", fmt.Errorf("kmsenvelope: create key: %w", err)
	}
	if _, err := client.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: &alias, TargetKeyId: key.KeyMetadata.KeyId}); err != nil {
		return "", fmt.Errorf("kmsenvelope: create alias %s: %w", alias, err)
	}
	return *key.KeyMetadata.KeyId, nil
}
