package server

// stash keeps a few large buffers for the responses that need one, a
// HistoryRead's values and its encoded response: a connection keeps no
// buffer beyond keepSize, and a stash, unlike a sync.Pool, is not emptied
// by each garbage collection. It holds at most stashCount buffers of at
// most stashMax bytes.
type stash chan []byte

const (
	stashCount = 4
	stashMax   = 1 << 20
)

func newStash() stash { return make(stash, stashCount) }

// get returns an empty buffer of capacity n or more.
func (s stash) get(n int) []byte {
	select {
	case b := <-s:
		if cap(b) >= n {
			return b[:0]
		}
	default:
	}
	return make([]byte, 0, n)
}

// put gives b back; a buffer beyond stashMax, or one more than the
// stash holds, is left to the garbage collector.
func (s stash) put(b []byte) {
	if cap(b) > stashMax {
		return
	}
	select {
	case s <- b[:0]:
	default:
	}
}
