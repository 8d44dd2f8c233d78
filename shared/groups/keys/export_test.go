package keys

// SharedKeys are the decoded keys authentication currently shares between
// requests.
func SharedKeys() []*Key {
	authCached.mu.RLock()
	defer authCached.mu.RUnlock()
	out := make([]*Key, 0, len(authCached.keys))
	for _, e := range authCached.keys {
		out = append(out, e.k)
	}
	return out
}
