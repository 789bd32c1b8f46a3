package server

import (
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// TestAwaitWrites: the pending writes of a request are awaited together,
// whatever order their devices answer in; those not answered by the
// timeout are Bad_Timeout, those answered are not held up by them, and
// operations without a pending result keep their status.
func TestAwaitWrites(t *testing.T) {
	const n = 10
	chans := make([]chan ua.StatusCode, n)
	pending := make([]addrspace.Pending, n+1)
	out := make([]ua.StatusCode, n+1)
	for i := range chans {
		chans[i] = make(chan ua.StatusCode, 1)
		pending[i] = chans[i]
	}
	out[n] = status.BadNotWritable // answered at once: no pending result
	// The device answers in reverse order, all but operation 3; operation 7
	// with an error.
	go func() {
		for i := n - 1; i >= 0; i-- {
			switch i {
			case 3:
			case 7:
				chans[i] <- status.BadCommunicationError
			default:
				chans[i] <- status.Good
			}
		}
	}()
	awaitWrites(pending, out, 200*time.Millisecond)
	for i, st := range out {
		want := status.Good
		switch i {
		case 3:
			want = status.BadTimeout
		case 7:
			want = status.BadCommunicationError
		case n:
			want = status.BadNotWritable
		}
		if st != want {
			t.Errorf("operation %d: %v, want %v", i, st, want)
		}
	}
}
