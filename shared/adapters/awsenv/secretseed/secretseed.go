// Package secretseed derives a 32-byte signing seed from a Secrets Manager
// secret that CDK generates (any string of at least 32 characters: the seed
// is its SHA-256). Only the functions that sign link it.
package secretseed

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// Load reads the secret named by arn and derives its seed.
func Load(ctx context.Context, cfg aws.Config, arn string) ([]byte, error) {
	out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &arn})
	if err != nil {
		return nil, fmt.Errorf("secretseed: read %s: %w", arn, err)
	}
	if out.SecretString == nil || len(*out.SecretString) < 32 {
		return nil, errors.New("secretseed: the secret must be a string of at least 32 characters")
	}
	seed := sha256.Sum256([]byte(*out.SecretString))
	return seed[:], nil
}
