package kmsenvelope_test

import (
	"context"
	"errors"
	"testing"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/envelope/envelopetest"
	"platformapi/shared/adapters/envelope/kmsenvelope"
)

func TestConformance(t *testing.T) {
	env := awstest.Env(t)
	envelopetest.RunConformance(t, func(t *testing.T) envelope.Sealer {
		return kmsenvelope.New(awstest.Key(t, env))
	})
}

func TestAnotherKeyCannotOpen(t *testing.T) {
	env := awstest.Env(t)
	ctx := context.Background()
	sealed, err := kmsenvelope.New(awstest.Key(t, env)).Seal(ctx, []byte("secret"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kmsenvelope.New(awstest.Key(t, env)).Open(ctx, sealed, nil); !errors.Is(err, envelope.ErrDecrypt) {
		t.Fatalf("err = %v; want ErrDecrypt", err)
	}
}

func TestKMSOutageAnswersUnavailable(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	s := kmsenvelope.New(awstest.Key(t, env))
	ctx := context.Background()
	sealed, err := s.Seal(ctx, []byte("secret"), nil)
	if err != nil {
		t.Fatal(err)
	}
	faults.Set("KMS.GenerateDataKey", awsenv.Throttle)
	faults.Set("KMS.Decrypt", awsenv.ServerError)
	defer faults.Clear()
	if _, err := s.Seal(ctx, []byte("x"), nil); !errors.Is(err, envelope.ErrUnavailable) {
		t.Fatalf("Seal during an outage: %v; want ErrUnavailable", err)
	}
	if _, err := s.Open(ctx, sealed, nil); !errors.Is(err, envelope.ErrUnavailable) {
		t.Fatalf("Open during an outage: %v; want ErrUnavailable", err)
	}
}
