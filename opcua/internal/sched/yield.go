// Package sched has Yielder, which lets a busy goroutine give way to the
// others the way a goroutine that waits for a socket does.
package sched

// A goroutine that works for milliseconds without blocking must give way
// to the others, and runtime.Gosched does not do that fully: the yielding
// goroutine goes on the global run queue, where the scheduler finds it
// before it looks at its network poller, which it polls only when there
// is nothing to run (or every 10 ms, from the monitor thread). A goroutine
// that keeps yielding so keeps every goroutine that waits for a socket or
// a timerfd waiting, up to 10 ms at a time: the connections' requests are
// not read, the responses that would relieve it are not asked for, and
// the work it has grows. Yield instead parks the goroutine in the poller,
// on an eventfd it has just made readable, so that it runs again when the
// scheduler next polls: after the goroutines that are runnable, together
// with those whose sockets became ready. See docs/performance.md.
