// Package sharedconfig is the SDK's standard configuration chain as an
// awsenv.Source: environment, shared config and credentials files and
// profiles, SSO, web identity, instance metadata. The local server and the
// tests use it, so that they run on a developer's profile as well as on
// environment credentials; deployed functions use awsenv.Environment and
// link none of this (shared/harness/lambdatest checks that).
package sharedconfig

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// Load is config.LoadDefaultConfig: pass it to awsenv.WithSource.
func Load(ctx context.Context) (aws.Config, error) { return config.LoadDefaultConfig(ctx) }
