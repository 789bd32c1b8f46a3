package configsvc

import "golang.org/x/sys/unix"

// lowerThreadPriority makes the calling thread the last to get a core
// when others want it (nice 19).
func lowerThreadPriority() {
	unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19)
}
