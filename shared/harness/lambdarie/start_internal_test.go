package lambdarie

import (
	"context"
	"net"
	"os"
	"testing"
	"time"
)

// Another process may take an address between its choice and the
// emulator's bind: Start then starts the emulator again on new addresses
// instead of failing the function.
func TestAnAddressTakenBeforeTheEmulatorBindsIsChosenAgain(t *testing.T) {
	rie, err := Binary("../../..")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, which := range []string{"invocation address", "runtime API address"} {
		t.Run(which, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			real := freeAddr
			calls := 0
			freeAddr = func() (string, error) {
				calls++
				if (which == "invocation address" && calls == 1) || (which == "runtime API address" && calls == 2) {
					return taken.Addr().String(), nil
				}
				return real()
			}
			defer func() { freeAddr = real }()

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			fn, err := Start(ctx, Config{RIE: rie, Path: exe, Name: "probe", Env: []string{"LAMBDARIE_FUNCTION=echo"}})
			if err != nil {
				t.Fatal(err)
			}
			defer fn.Stop()
			if calls != 4 {
				t.Errorf("addresses chosen: %d, want 4 (two attempts)", calls)
			}
			if _, err := fn.Invoke(ctx, []byte(`{"action":"echo"}`)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
