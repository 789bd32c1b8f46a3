package tsdb

import "golang.org/x/sys/unix"

// freeSpace is statFree but for tests.
var freeSpace = statFree

// freeSpace returns the bytes free for an unprivileged user on dir's file
// system.
func statFree(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
