package launch

import "syscall"

// setParentDeathSignal makes the kernel send SIGTERM to the runtime when
// agentd dies, so a crashed agent leaves no server behind holding GPU
// memory. Linux ties this to the thread that forked, not the process: it
// would fire early only if that thread exited, which the Go runtime does
// just for goroutines that exit while locked to their thread — not ours.
func setParentDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGTERM }
