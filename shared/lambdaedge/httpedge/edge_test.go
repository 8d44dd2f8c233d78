package httpedge

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"platformapi/shared/api"
)

func TestUnknownGroupIsRefusedBeforeAnythingIsBuilt(t *testing.T) {
	setupRan := false
	_, err := build(context.Background(), slog.New(slog.DiscardHandler), "kyes", func(context.Context, *Env) (api.Group, error) {
		setupRan = true
		return api.Group{}, nil
	})
	if err == nil || !strings.Contains(err.Error(), `"kyes"`) {
		t.Fatalf("error %v, want the unknown group named", err)
	}
	if setupRan {
		t.Error("the group's setup ran for an unknown group")
	}
}
