package apitest

import (
	"reflect"
	"slices"
	"sync"

	"platformapi/shared/adapters/work"
	"platformapi/shared/api"
	"platformapi/shared/groups/credits/creditsapi"
	"platformapi/shared/groups/keys/keysapi"
	"platformapi/shared/groups/projects/projectsapi"
	"platformapi/shared/groups/public/publicapi"
)

// Core are the groups every test server has: public (health, the
// document), keys (RootKey, Child), credits (Balance, top-ups) and
// projects, with which nearly every test makes its account and scope. They
// link no chain node, no development chain and no SQLite.
var Core = []api.NewGroup{publicapi.Group, keysapi.Group, creditsapi.Group, projectsapi.Group}

var serving struct {
	sync.Mutex
	groups []api.NewGroup
}

// Serve adds groups to every server of this test binary, after Core, and
// returns true so that a test package declares what it reaches in one
// line: var _ = apitest.Serve(webhooksapi.Group). The binary links only
// those groups.
func Serve(groups ...api.NewGroup) bool {
	serving.Lock()
	defer serving.Unlock()
	serving.groups = append(serving.groups, groups...)
	return true
}

// served are Core and the groups Served, each once, in that order.
func served() []api.NewGroup {
	serving.Lock()
	defer serving.Unlock()
	out := slices.Clone(Core)
	for _, g := range serving.groups {
		if !slices.ContainsFunc(out, func(h api.NewGroup) bool { return same(g, h) }) {
			out = append(out, g)
		}
	}
	return out
}

// servedQueues are the queues of the groups this binary serves, declared
// once: Serve is called only while the test packages initialise.
var servedQueues = sync.OnceValues(func() ([]work.Queue, error) { return api.Queues(served()) })

// same reports whether g and h are the same constructor.
func same(g, h api.NewGroup) bool {
	return reflect.ValueOf(g).Pointer() == reflect.ValueOf(h).Pointer()
}
