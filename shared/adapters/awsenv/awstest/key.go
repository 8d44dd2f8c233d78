package awstest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/envelope/kmsenvelope"
)

// Key creates a fresh KMS key behind a fresh alias, scheduled for deletion
// (the shortest KMS allows) when the test ends, and returns the alias.
func Key(t testing.TB, env *awsenv.Env) (*kms.Client, string) {
	t.Helper()
	client, alias := env.KMS(), "alias/"+Name(t, "test-key")
	id, err := kmsenvelope.CreateKey(Context(t), client, alias)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = client.DeleteAlias(ctx, &kms.DeleteAliasInput{AliasName: &alias})
		days := int32(7)
		_, _ = client.ScheduleKeyDeletion(ctx, &kms.ScheduleKeyDeletionInput{KeyId: &id, PendingWindowInDays: &days})
	})
	return client, alias
}
