package lambdaedge

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"platformapi/shared/app"
)

func TestUnknownGroupIsRefusedBeforeStorageOpens(t *testing.T) {
	dir := t.TempDir()
	cfg := app.Config{Backend: "embedded", DataDir: dir}
	_, err := build(context.Background(), cfg, slog.New(slog.DiscardHandler), "kyes")
	if err == nil || !strings.Contains(err.Error(), `"kyes"`) {
		t.Fatalf("error %v, want the unknown group named", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("storage was touched for an unknown group: %v", filepath.Join(dir, entries[0].Name()))
	}
}
