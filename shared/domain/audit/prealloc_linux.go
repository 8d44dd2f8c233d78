package audit

import (
	"os"
	"syscall"
)

// preallocate allocates n bytes of f from off and grows its size over
// them (fallocate(2), mode 0): the bytes read as NULs until written.
func preallocate(f *os.File, off, n int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = syscall.Fallocate(int(fd), 0, off, n) }); err != nil {
		return err
	}
	return ferr
}
