package uasc

import (
	"sync"
	"sync/atomic"
	"time"
)

// A Budget bounds the bytes that the channels sharing it may hold for the
// reassembly of multi-chunk requests (Config.Budget): a server gives all
// its channels one, so that many clients each sending a large request
// cannot take more memory together than the budget. A channel takes from
// it as its reassembly buffer grows and gives back when the buffer is
// released (after a request larger than keepMsgCap, or when the channel
// ends). It also paces them: the chunks of multi-chunk requests after the
// first are read at most at the budget's rate, all channels together, so
// that clients streaming large requests cannot take the gateway's CPU (the
// copying, the decoding, the collection of the buffers) from the scan;
// TCP's flow control slows them down meanwhile. Safe for concurrent use.
type Budget struct {
	limit    int64
	used     atomic.Int64
	returned atomic.Int64 // all bytes ever given back

	rate  float64 // bytes per second; 0: no pacing
	mu    sync.Mutex
	ahead time.Time // when the bytes admitted so far are paid for
}

// NewBudget returns a budget of limit bytes, paced at rate bytes per
// second (0: not paced).
func NewBudget(limit, rate int64) *Budget {
	return &Budget{limit: limit, rate: float64(rate)}
}

// paceBurst is how far ahead of its rate the budget lets the channels read.
const paceBurst = 50 * time.Millisecond

// pace accounts for n bytes of a multi-chunk request and returns how long
// the reading channel should wait before it reads on (0: not at all).
func (b *Budget) pace(n int) time.Duration {
	if b == nil || b.rate <= 0 {
		return 0
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ahead.Before(now) {
		b.ahead = now
	}
	b.ahead = b.ahead.Add(time.Duration(float64(n) / b.rate * float64(time.Second)))
	return max(0, b.ahead.Sub(now)-paceBurst)
}

// Used returns the bytes taken now.
func (b *Budget) Used() int64 { return b.used.Load() }

// Returned returns the bytes given back so far, all told: what grew by
// much since the last look was released and can go back to the OS.
func (b *Budget) Returned() int64 { return b.returned.Load() }

// take reserves n bytes and reports whether they were there.
func (b *Budget) take(n int64) bool {
	if b == nil {
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// give returns n bytes.
func (b *Budget) give(n int64) {
	if b != nil && n != 0 {
		b.used.Add(-n)
		b.returned.Add(n)
	}
}

// keepMsgCap is the largest reassembly buffer a channel keeps from one
// request to the next; a larger one is released once its request was
// handed out, so that one large request does not hold its memory for the
// life of the channel.
const keepMsgCap = 64 << 10
