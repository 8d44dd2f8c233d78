package walletsenv_test

import (
	"testing"
	"time"

	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/chain"
	"platformapi/shared/groups/swaps/walletsenv"
)

// One process wires managed wallets and swaps once: its wallets group,
// its swaps group and its worker share the services, so a swap hears of
// each move of a wallet transaction whichever of them made it.
func TestAProcessWiresWalletsAndSwapsOnceForBothGroupsAndTheWork(t *testing.T) {
	nets, err := chain.NewNetworks()
	if err != nil {
		t.Fatal(err)
	}
	p := ports.Ports{Store: teststores.Embedded.Open(t, time.Now)}
	sh := walletsenv.NewShared(nets)
	wallets, swaps := sh.On(p), sh.On(p)
	if wallets.Wallets != swaps.Wallets || wallets.Swaps != swaps.Swaps {
		t.Fatal("the wallets and swaps groups of one process were wired apart")
	}
	if w := wallets.Work(); len(w.Workers) != 1 || len(w.Passes) != 1 {
		t.Fatalf("work on chains: %d workers, %d passes", len(w.Workers), len(w.Passes))
	}
}

// Without chains there is nothing to share and no work: each list built on
// its own ports (every test server's) wires on those ports.
func TestWithoutChainsEachBuildWiresOnItsOwnPortsAndHasNoWork(t *testing.T) {
	sh := walletsenv.NewShared(nil)
	a := sh.On(ports.Ports{Store: teststores.Embedded.Open(t, time.Now)})
	b := sh.On(ports.Ports{Store: teststores.Embedded.Open(t, time.Now)})
	if a.Wallets == b.Wallets {
		t.Fatal("two processes' ports share one wiring")
	}
	if w := a.Work(); len(w.Workers)+len(w.Passes) != 0 {
		t.Fatalf("work without chains: %+v", w)
	}
}
