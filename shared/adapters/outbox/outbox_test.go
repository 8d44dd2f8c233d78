package outbox_test

import (
	"reflect"
	"testing"

	"platformapi/shared/adapters/outbox"
	"platformapi/shared/groups/swaps"
	"platformapi/shared/groups/trading"
	"platformapi/shared/groups/wallets"
	"platformapi/shared/groups/webhooks"
)

// Every domain that commits its own events takes the one port, and the
// webhook domain's repository is that port: a process wires one value into
// all of them, and a change to the port is a change to each.
func TestEveryDomainThatCommitsItsEventsTakesTheOnePort(t *testing.T) {
	port := reflect.TypeFor[outbox.Recorder]()
	for name, cfg := range map[string]any{"wallets": wallets.Config{}, "swaps": swaps.Config{}, "trading": trading.Config{}} {
		f, ok := reflect.TypeOf(cfg).FieldByName("Outbox")
		if !ok || f.Type != port {
			t.Errorf("%s.Config.Outbox is %v, want %v", name, f.Type, port)
		}
	}
	if !reflect.TypeFor[*webhooks.Repo]().Implements(port) {
		t.Error("*webhooks.Repo is not an outbox.Recorder")
	}
}
