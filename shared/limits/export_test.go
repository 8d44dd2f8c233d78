package limits

// Unused is the window tokens c counted on the store and has not used yet.
func Unused(c *Counter) int64 { return c.minute.unused() }
