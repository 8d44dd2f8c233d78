package audit

// SetMaxScan lowers the per-page scan budget for a test and restores it.
func SetMaxScan(n int) (restore func()) {
	old := maxScan
	maxScan = n
	return func() { maxScan = old }
}
