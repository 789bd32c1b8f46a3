package plc

import (
	"context"
	"slices"
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
	err      error       // set when done is closed
	after    func()      // the call's first AfterFunc, see AfterFunc
	more     []*func()   // further AfterFuncs (context.AfterFunc and the like)
	stop     func() bool // c.stopAfter, made once
}

var _ context.Context = (*callCtx)(nil)

func newCallCtx(parent context.Context) *callCtx {
	c := &callCtx{parent: parent, done: make(chan struct{})}
	c.stop = c.stopAfter
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

// end ends the call, and with it the functions registered by AfterFunc.
func (c *callCtx) end() {
	c.timer.Stop()
	c.mu.Lock()
	c.active = false
	c.after = nil
	clear(c.more)
	c.more = c.more[:0]
	c.mu.Unlock()
}

// AfterFunc arranges for f to run once Done closes during the call (its
// deadline passed, or Run's context ended), on the goroutine that closes
// it; stop keeps f from running and reports whether it did. It is the
// method context.AfterFunc looks for, and a driver calls it directly to
// arm an abort for each call (a deadline that cuts a blocked read short):
// the first registration of a call takes a slot whose stop function was
// made once, so that it costs neither a goroutine nor an allocation,
// where context.AfterFunc on a context of its own kind starts a goroutine
// for each call. When Done is closed already, f runs at once on a
// goroutine of its own.
func (c *callCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	if c.after == nil {
		c.after = f
		return c.stop
	}
	p := boxFunc(f) // f itself stays off the heap in the slot's path
	c.more = append(c.more, p)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, q := range c.more {
			if q == p {
				c.more = slices.Delete(c.more, i, i+1)
				return true
			}
		}
		return false
	}
}

func boxFunc(f func()) *func() { return &f }

// stopAfter is the stop function of the slot of AfterFunc.
func (c *callCtx) stopAfter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	had := c.after != nil
	c.after = nil
	return had
}

// fireLocked closes done with err and takes the functions registered by
// AfterFunc, which the caller runs once it has unlocked c.mu.
func (c *callCtx) fireLocked(err error) (run []func()) {
	c.err = err
	close(c.done)
	if c.after != nil {
		run = append(run, c.after)
		c.after = nil
	}
	for _, p := range c.more {
		run = append(run, *p)
	}
	clear(c.more)
	c.more = c.more[:0]
	return run
}

// expire closes done if the running call's deadline has passed (a timer
// of an earlier call that fires late finds the deadline ahead, or no call,
// and does nothing).
func (c *callCtx) expire() {
	var run []func()
	c.mu.Lock()
	if c.active && c.err == nil && !time.Now().Before(c.deadline) {
		run = c.fireLocked(context.DeadlineExceeded)
	}
	c.mu.Unlock()
	for _, f := range run {
		f()
	}
}

// cancel closes done for good when the parent ends.
func (c *callCtx) cancel() {
	var run []func()
	c.mu.Lock()
	if c.err == nil {
		run = c.fireLocked(c.parent.Err())
	}
	c.mu.Unlock()
	for _, f := range run {
		f()
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
