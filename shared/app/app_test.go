package app_test

import (
	"context"
	"testing"

	"platformapi/shared/app"
	"platformapi/shared/groups/services/superbrain"
)

// The local process builds its managed services once, with its store: the
// server and the work, each handed the process's ports, reach the same
// built-in service, not one each.
func TestTheLocalProcessBuildsItsManagedServicesOnce(t *testing.T) {
	rt, err := app.Open(context.Background(), app.Config{Backend: "embedded", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	server, work := rt.Ports(nil), rt.Ports(nil)
	if server.Services[superbrain.ServiceID] == nil || server.Services[superbrain.ServiceID] != work.Services[superbrain.ServiceID] {
		t.Fatalf("the server reaches %p and the work %p", server.Services[superbrain.ServiceID], work.Services[superbrain.ServiceID])
	}
}
