package plc

import (
	"context"
	"sync"
	"time"
)

// callCtx is the context a device's goroutine passes to Poll and Write.
// One callCtx per device is reused from call to call, so that a cycle
// allocates nothing: it carries the call's deadline (Deadline), and its
// Done channel closes when that deadline passes or when Run's context
// ends. A Done channel that closed on a deadline is replaced at the next
// call (the only allocation, after a timeout). Hence the rule in Device:
// a driver must not use the context after the call returns.
type callCtx struct {
	parent context.Context
	timer  *time.Timer // runs expire

	mu       sync.Mutex
	active   bool // a call is running
	deadline time.Time
	done     chan struct{}
	err      error // set when done is closed
}

var _ context.Context = (*callCtx)(nil)

func newCallCtx(parent context.Context) *callCtx {
	c := &callCtx{parent: parent, done: make(chan struct{})}
	c.timer = time.AfterFunc(time.Hour, c.expire)
	c.timer.Stop()
	context.AfterFunc(parent, c.cancel)
	return c
}

// begin starts a call that must end by deadline.
func (c *callCtx) begin(deadline time.Time) {
	c.mu.Lock()
	if c.err != nil && c.parent.Err() == nil {
		// Closed by an earlier deadline: a fresh channel.
		c.done, c.err = make(chan struct{}), nil
	}
	c.active, c.deadline = true, deadline
	c.mu.Unlock()
	c.timer.Reset(time.Until(deadline))
}

// end ends the call.
func (c *callCtx) end() {
	c.timer.Stop()
	c.mu.Lock()
	c.active = false
	c.mu.Unlock()
}

// expire closes done if the running call's deadline has passed (a timer
// of an earlier call that fires late finds the deadline ahead, or no call,
// and does nothing).
func (c *callCtx) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active && c.err == nil && !time.Now().Before(c.deadline) {
		c.err = context.DeadlineExceeded
		close(c.done)
	}
}

// cancel closes done for good when the parent ends.
func (c *callCtx) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = c.parent.Err()
		close(c.done)
	}
}

func (c *callCtx) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline, c.active
}

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

func (c *callCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *callCtx) Value(key any) any { return c.parent.Value(key) }
