//go:build !unix

package launch

import (
	"os"
	"syscall"
)

// Without process groups only the runtime's own process can be stopped,
// and only abruptly; agentd's white-box mode is meant for Unix.

func groupAttr(bool) *syscall.SysProcAttr { return nil }

func terminateGroup(pid int) error { return killGroup(pid) }

func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	if err := p.Kill(); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}

func groupAlive(int) bool { return false }
