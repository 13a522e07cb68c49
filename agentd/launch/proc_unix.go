//go:build unix

package launch

import (
	"errors"
	"syscall"
)

// groupAttr puts the child in a process group of its own, whose id is its
// pid, so that signals reach everything it forks.
func groupAttr(parentDeath bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if parentDeath {
		setParentDeathSignal(attr)
	}
	return attr
}

func terminateGroup(pgid int) error { return signalGroup(pgid, syscall.SIGTERM) }
func killGroup(pgid int) error      { return signalGroup(pgid, syscall.SIGKILL) }

func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 0 {
		return errors.New("no process group")
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether any process is left in the group. A member
// that has exited but not yet been reaped by its new parent counts.
func groupAlive(pgid int) bool {
	return pgid > 0 && syscall.Kill(-pgid, 0) == nil
}
