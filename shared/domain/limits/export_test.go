package limits

// Unused is the window tokens c counted on the store and has not used yet.
func Unused(c *Counter) int64 { return c.minute.unused() }

// FenceName is the fence attribute of lane n of process id.
func FenceName(id string, n int) string { return fenceName(id, n) }

const (
	MaxFences      = maxFences
	FenceCountAttr = fenceCountAttr
)
