package uasc

import "sync/atomic"

// A Budget bounds the bytes that the channels sharing it may hold for the
// reassembly of multi-chunk requests (Config.Budget): a server gives all
// its channels one, so that many clients each sending a large request
// cannot take more memory together than the budget. A channel takes from
// it as its reassembly buffer grows and gives back when the buffer is
// released (after a request larger than keepMsgCap, or when the channel
// ends). Safe for concurrent use.
type Budget struct {
	limit    int64
	used     atomic.Int64
	returned atomic.Int64 // all bytes ever given back
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

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
