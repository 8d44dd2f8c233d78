//go:build !linux

package bench

import "time"

// pinning is Linux's sched_setaffinity; elsewhere the load is not pinned.
type pinning struct{}

func newPinning() (*pinning, bool)    { return nil, false }
func (p *pinning) confineServer()     {}
func (p *pinning) release()           {}
func (p *pinning) clientThread()      {}
func (p *pinning) describe() string   { return "" }
func (p *pinning) confineClient()     {}
func (p *pinning) serverCPUs() string { return "" }
func (p *pinning) clientCPU() string  { return "" }
func confineTo(string) error          { return nil }

func preciseSleeps()               {}
func preciseSleep(d time.Duration) { time.Sleep(d) }
