package plc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// Config configures an Engine. Zero durations take the defaults named.
type Config struct {
	// Period is the base cycle (default 5 ms); every scan class is a
	// multiple of it.
	Period time.Duration
	// Devices are the devices, by name; each Tag names one.
	Devices []DeviceConfig
	// Tags are the tags; a tag's Handle is its index here.
	Tags []Tag
	// PollTimeout is the deadline of each Poll and Write (default 1 s).
	// A poll still running after it makes its device count as not
	// answering even if the driver ignores its context.
	PollTimeout time.Duration
	// CollectTimeout is how long a cycle waits for the polls it started
	// before it publishes its image (default Period/2; it must be shorter
	// than Period). A poll that ends later is published by a later cycle.
	CollectTimeout time.Duration
	// NoCommAfter is how long a tag's source may stay silent before its
	// status goes from status.UncertainLastUsableValue (or
	// status.BadWaitingForInitialData) to status.BadNoCommunication (default 10 s).
	NoCommAfter time.Duration
	// WriteTimeout is how long a queued write may wait for its busy
	// device before it fails with status.BadTimeout (default 1 s).
	WriteTimeout time.Duration
	// WriteQueue is the capacity of the queue between Write and the
	// cycle (default 256); Write fails with status.BadResourceUnavailable when
	// it is full.
	WriteQueue int
	// Window is the number of cycles over which Diagnostics computes
	// percentiles (default 1024).
	Window int
	// PreciseWake, when above 0, makes the cycle wake at its start
	// within tens of microseconds: Go's timers wake a process that is
	// otherwise idle up to 1 ms late (the runtime waits for events in
	// whole milliseconds). On Linux the cycle goroutine then waits on a
	// timerfd in Go's network poller, parked like a goroutine waiting for
	// a socket, holding no thread (see docs/performance.md, Idle);
	// elsewhere its timer fires this much before each cycle's start and
	// it sleeps the rest with nanosleep on its own thread. 0 (the
	// default) uses Go's timers alone, as tests under testing/synctest
	// need: the operating system's clocks do not follow a bubble's. It
	// must be shorter than Period; edged uses 1 ms.
	PreciseWake time.Duration
	// OwnThreadWait makes the cycle goroutine wait for each cycle in
	// nanosleep on its own thread for the whole wait, not only the last
	// PreciseWake; the results, writes and changes that come meanwhile
	// are taken at the cycle's start. For a goroutine whose thread has
	// real-time priority (board.RealTime): its wake-up then does not wait
	// for the Go runtime's timer, which runs on threads of normal
	// priority that a busy process on the same core delays.
	OwnThreadWait bool
}

// DeviceConfig names a Device.
type DeviceConfig struct {
	Name   string
	Device Device
}

// Engine is the scan engine. New builds it, Run runs the cycle until its
// context ends. Image, Write, Subscribe, Lookup, Diagnostics, Healthy and
// Reconnect are safe to call from any goroutine at any time.
//
// One goroutine (Run's) owns the tag state: it starts the polls, merges
// their results, queues writes and publishes images. Each device has its
// own goroutine that runs Write and Poll for it; they talk to Run's
// goroutine over channels.
type Engine struct {
	period, pollTimeout, collectTimeout, noCommAfter, writeTimeout time.Duration
	preciseWake                                                    time.Duration
	ownThreadWait                                                  bool

	// Owned by Run's goroutine (and by New and Reconfigure before and
	// while Run waits for a change); other goroutines read lay and
	// devList.
	tags   []Tag   // by handle; Tag{} for a handle not in use (see Reconfigure)
	tagDev []int32 // device index by handle, -1 for none
	devs   []*device
	// The tags and the devices as other goroutines see them; replaced
	// whole by Reconfigure.
	lay     atomic.Pointer[layout]
	devList atomic.Pointer[[]*device]
	// Reconfigure: its changes to Run's goroutine, and the handles of the
	// tags it ever had, by device and name (never reused for another;
	// replaced, never changed: the layout's names are the same).
	reMu     sync.Mutex
	reconf   chan *plan
	names    *tagNames
	retiring []*device     // dropped devices whose last job is out
	stopped  chan struct{} // closed when Run has ended

	// Owned by Run's goroutine.
	work     tagState             // the tag state: next's (the current image's while next is nil)
	lastOK   []int64              // by handle: when the source last answered for the tag
	lastGood map[Handle]lastValue // the last usable value of tags whose state is Bad
	lastStr  []string             // the last usable text of the String tags, by slot
	changed  []Handle             // tags changed since the last publish
	marked   []uint64             // by handle: the publish in whose changed list it is
	dueMark  []uint64             // by handle: the cycle that read it back after a write
	acked    []func(Status)       // done funcs of writes performed, to call after the next publish
	pubSeq   uint64               // publishes so far
	results  chan *job
	collect  *time.Timer

	writes chan writeReq
	wmu    sync.RWMutex // orders Write's send against shutdown
	state  atomic.Int32

	cur         atomic.Pointer[Image]
	next        *Image        // claimed: the image the cycle writes (work), published next; nil until the first write after a publish
	replaced    *Image        // the image the last publish replaced, while next is nil
	held        []*Image      // earlier images readers held when they were replaced (at most maxHeld)
	calm        uint64        // publishes in a row that reused the image they replaced
	recycled    atomic.Uint64 // publishes that set an image aside for reuse
	allocated   atomic.Uint64 // publishes that allocated one: readers held the earlier ones
	subMu       sync.Mutex
	subs        atomic.Pointer[[]*subscriber]
	lastPublish atomic.Int64 // Unix ns

	// Diagnostics.
	dmu      sync.Mutex
	cycleWin window
	jitWin   window
	cycles   uint64
	overruns uint64
	lastN    uint64

	wg sync.WaitGroup

	stall atomic.Bool // Stall
}

const (
	stateNew int32 = iota
	stateRunning
	stateStopped
)

// lastValue is a tag's last usable value, kept apart while its state in
// the image is Bad (while it is not, the state is that value): one map
// entry for each such tag, not 24 bytes for every tag. A String's last
// text is in Engine.lastStr.
type lastValue struct {
	bits uint64
	ts   int64 // its source timestamp
	typ  Type
}

// class is the tags of one device that share a scan class.
type class struct {
	every   uint64 // in cycles
	next    uint64 // the next cycle it is due
	handles []Handle
}

// device is Run's state for one Device.
type device struct {
	name    string
	dev     Device
	handles []Handle
	classes []class
	jobs    chan *job // capacity 1; one job in flight at most
	job     *job
	pending []writeReq

	busy    bool
	hung    bool
	failing bool
	retired bool          // Reconfigure dropped it; its worker ends after its job
	inline  bool          // polled on the cycle's goroutine (Inline)
	cc      *callCtx      // the context of inline calls, made at the first one
	exited  chan struct{} // closed when its worker returned

	// Counters, read by Diagnostics.
	polls, pollErrors, skipped, writes, writeErrors atomic.Uint64
	pollTime                                        atomic.Int64
	busyNow, failingNow                             atomic.Bool
}

// job is the work of one device in one cycle, reused from cycle to cycle.
type job struct {
	d          *device
	cycle      uint64
	dispatched int64 // Unix ns
	due        []Handle
	out        []Sample
	writes     []writeReq
	err        error
	start, end time.Time
}

type writeReq struct {
	h      Handle
	v      Value
	done   func(Status)
	queued int64
	result Status
}

type subscriber struct{ fn func(*Image) }

// New checks cfg, binds each device to its tags and returns an Engine
// whose image holds every tag as status.BadWaitingForInitialData. Errors name the
// device, the tag and the field.
func New(cfg Config) (*Engine, error) {
	e, err := newTiming(cfg)
	if err != nil {
		return nil, err
	}
	if err := e.addDevices(cfg.Devices); err != nil {
		return nil, err
	}
	if err := e.addTags(cfg.Tags); err != nil {
		return nil, err
	}
	for _, d := range e.devs {
		if err := e.bindDevice(d, e.tags); err != nil {
			return nil, err
		}
	}
	wq := cfg.WriteQueue
	if wq <= 0 {
		wq = 256
	}
	e.results = make(chan *job, len(e.devs)+resultSlack)
	e.writes = make(chan writeReq, wq)
	e.subs.Store(new([]*subscriber))
	e.lastStr = make([]string, len(e.work.strs))
	e.publishLayout()
	e.held = make([]*Image, 0, maxHeld)
	e.next = e.workImage()
	im := e.newImage()
	copy(im.state.entries, e.work.entries)
	im.pin.Store(pinFree)
	e.cur.Store(im)
	return e, nil
}

// newTiming returns an engine with cfg's period, timeouts, wake-up and
// statistics window, the defaults where cfg has none.
func newTiming(cfg Config) (*Engine, error) {
	e := &Engine{
		period:         cfg.Period,
		pollTimeout:    cfg.PollTimeout,
		collectTimeout: cfg.CollectTimeout,
		noCommAfter:    cfg.NoCommAfter,
		writeTimeout:   cfg.WriteTimeout,
		preciseWake:    cfg.PreciseWake,
		ownThreadWait:  cfg.OwnThreadWait,
		reconf:         make(chan *plan),
		stopped:        make(chan struct{}),
	}
	if e.period == 0 {
		e.period = 5 * time.Millisecond
	}
	if e.period < 0 {
		return nil, fmt.Errorf("plc: Period %v is negative", e.period)
	}
	if e.pollTimeout <= 0 {
		e.pollTimeout = time.Second
	}
	if e.collectTimeout <= 0 {
		e.collectTimeout = e.period / 2
	}
	if e.collectTimeout >= e.period {
		return nil, fmt.Errorf("plc: CollectTimeout %v is not shorter than the Period %v: a slow device would delay every cycle", e.collectTimeout, e.period)
	}
	if e.preciseWake < 0 || e.preciseWake >= e.period {
		return nil, fmt.Errorf("plc: PreciseWake %v is not in [0, Period %v)", e.preciseWake, e.period)
	}
	if e.noCommAfter <= 0 {
		e.noCommAfter = 10 * time.Second
	}
	if e.writeTimeout <= 0 {
		e.writeTimeout = time.Second
	}
	win := cfg.Window
	if win <= 0 {
		win = 1024
	}
	e.cycleWin.buf = make([]time.Duration, win)
	e.jitWin.buf = make([]time.Duration, win)
	return e, nil
}

// addDevices adds the devices, each named once.
func (e *Engine) addDevices(devs []DeviceConfig) error {
	seen := make(map[string]int, len(devs))
	for i, dc := range devs {
		if err := checkDevice(i, dc, seen); err != nil {
			return err
		}
		seen[dc.Name] = i
		e.devs = append(e.devs, newDevice(dc))
	}
	return nil
}

// addTags checks the tags and lays out the process image's entries for
// them.
func (e *Engine) addTags(tags []Tag) error {
	devIdx := make(map[string]int, len(e.devs))
	for i, d := range e.devs {
		devIdx[d.name] = i
	}
	e.tags = slices.Clone(tags)
	e.tagDev = make([]int32, len(e.tags))
	e.work.entries = make([]entry, len(e.tags))
	e.work.slot = make([]int32, len(e.tags))
	e.marked = make([]uint64, len(e.tags))
	e.dueMark = make([]uint64, len(e.tags))
	e.lastOK = make([]int64, len(e.tags))
	e.lastGood = make(map[Handle]lastValue)
	for i := range e.tags {
		t := &e.tags[i]
		di, err := e.checkTag(i, t, devIdx)
		if err != nil {
			return err
		}
		if t.Scan == 0 {
			t.Scan = e.period
		}
		e.tagDev[i] = int32(di)
		d := e.devs[di]
		d.handles = append(d.handles, Handle(i))
		e.work.entries[i] = entry{status: status.BadWaitingForInitialData}
		e.work.slot[i] = -1
		if t.Type == String {
			e.work.slot[i] = int32(len(e.work.strs))
			e.work.strs = append(e.work.strs, "")
		}
	}
	var dup *Tag
	if e.names, dup = newTagNames(e.tags, nil); dup != nil {
		return fmt.Errorf("plc: tag %s.%s: Name used twice in the device", dup.Device, dup.Name)
	}
	return nil
}

// Stall stops the cycle for good, as a hung scan would: no image is
// published any more and Healthy turns false, until Run's context ends.
// It is for testing what watches the scan (edged's watchdog, with
// --test-stall-scan-after); nothing else calls it.
func (e *Engine) Stall() { e.stall.Store(true) }

// Period returns the base cycle.
func (e *Engine) Period() time.Duration { return e.period }

// Len returns the number of handles: every tag's handle is below it.
// After a Reconfigure that removed tags some handles below it are not in
// use (Tag returns a Tag with no Device for them).
func (e *Engine) Len() int { return len(e.lay.Load().tags) }

// Tag returns the tag with handle h (Scan filled in); a Tag with no
// Device if h is not in use.
func (e *Engine) Tag(h Handle) Tag {
	if l := e.lay.Load(); int(h) < len(l.tags) {
		return l.tags[h]
	}
	return Tag{}
}

// Lookup returns the handle of the tag device.name.
func (e *Engine) Lookup(device, name string) (Handle, bool) {
	l := e.lay.Load()
	return l.names.find(l.tags, device, name)
}

// Image returns the newest image, to keep as long as the caller likes. It
// never blocks and never allocates; before the first cycle it is an image
// of cycle 0 with every tag status.BadWaitingForInitialData.
//
// Image marks the image kept, so the engine never reuses it (see Image
// for the protocol): the publish after next allocates one. A reader that
// is done with it soon takes it with Acquire instead.
func (e *Engine) Image() *Image { return e.take(true) }

// Acquire returns the newest image like Image, held until the caller's
// Release: the engine reuses it once it is released (and no longer
// current), so that readers that come and go allocate nothing.
func (e *Engine) Acquire() *Image { return e.take(false) }

func (e *Engine) take(keep bool) *Image {
	for {
		if im := e.cur.Load(); im.hold(keep) {
			return im
		}
		// The engine claimed it for reuse, so it is no longer current:
		// the next load returns a newer image.
	}
}

// workImage returns a claimed image whose state is the work state, to
// be published next.
func (e *Engine) workImage() *Image {
	im := &Image{state: e.work}
	im.pin.Store(pinClaimed)
	return im
}

// newImage allocates an image for the engine's tags, claimed.
func (e *Engine) newImage() *Image {
	im := &Image{state: tagState{
		entries: make([]entry, len(e.work.entries)),
		strs:    make([]string, len(e.work.strs)),
		slot:    e.work.slot,
	}}
	im.pin.Store(pinClaimed)
	return im
}

// Subscribe registers fn to be called with each image as it is published,
// on Run's goroutine, right after the swap: fn must return quickly and
// must not call Subscribe or its cancel. The image is fn's to read during
// the call; to keep it longer, fn calls its Retain. cancel unregisters fn. A
// goroutine that wants to be woken instead subscribes a non-blocking send
// on a channel of capacity 1, which coalesces the images it missed:
//
//	e.Subscribe(func(*plc.Image) {
//		select {
//		case wake <- struct{}{}:
//		default:
//		}
//	})
func (e *Engine) Subscribe(fn func(*Image)) (cancel func()) {
	s := &subscriber{fn: fn}
	e.subMu.Lock()
	subs := append(slices.Clone(*e.subs.Load()), s)
	e.subs.Store(&subs)
	e.subMu.Unlock()
	return func() {
		e.subMu.Lock()
		defer e.subMu.Unlock()
		old := *e.subs.Load()
		if i := slices.Index(old, s); i >= 0 {
			subs := slices.Delete(slices.Clone(old), i, i+1)
			e.subs.Store(&subs)
		}
	}
}

// Reconnect asks device's driver to drop its connection and open it again
// with the next poll (see Reconnecter), from the caller's goroutine, and
// returns status.Good, the driver's error status, status.BadNotSupported when the
// driver cannot (GPIO, fakes), or BadNodeIdUnknown for an unknown device.
// The reopened connection is counted in the driver's Reconnects.
func (e *Engine) Reconnect(ctx context.Context, device string) Status {
	for _, d := range *e.devList.Load() {
		if d.name != device {
			continue
		}
		r, ok := d.dev.(Reconnecter)
		if !ok {
			return status.BadNotSupported
		}
		if err := r.Reconnect(ctx); err != nil {
			return StatusOf(err)
		}
		return status.Good
	}
	return status.BadNodeIDUnknown
}

// Healthy reports whether the cycle is running and published an image
// within the last two periods: the condition on which to feed a hardware
// watchdog.
func (e *Engine) Healthy() bool {
	if e.state.Load() != stateRunning {
		return false
	}
	last := e.lastPublish.Load()
	return last != 0 && time.Now().UnixNano()-last <= int64(2*e.period)
}

// Write queues a write of v to tag h for the next cycle in which h's
// device is idle, and returns at once: status.Good when queued;
// BadNodeIdUnknown, status.BadNotWritable (a Read tag), status.BadTypeMismatch or
// status.BadOutOfRange (v does not convert to the tag's type, is NaN or
// ±Inf without Tag.NonFinite, or is beyond Tag.WriteMin, WriteMax), or
// status.BadResourceUnavailable (the queue is full) or status.BadShutdown (Run has
// ended) when not. A queued write runs on the device's goroutine before
// the cycle's poll, and that poll reads the tag back whatever its scan
// class, so the image of that cycle holds the device's value; done, if
// not nil, is then called once with the device's answer: status.Good
// only after an image holding the read-back (or a newer one) is
// published, so that a Read after it sees the write; an error
// (status.BadTimeout, status.BadCommunicationError, the driver's mapped
// error) as soon as the device gives it. Or done is called with
// status.BadTimeout if the device stayed busy for Config.WriteTimeout, or
// status.BadShutdown if Run ended first. done is called from an engine
// goroutine and must not block.
func (e *Engine) Write(h Handle, v Value, done func(Status)) Status {
	tags := e.lay.Load().tags
	if int(h) >= len(tags) || tags[h].Device == "" {
		return status.BadNodeIDUnknown
	}
	t := &tags[h]
	if t.Access != ReadWrite {
		return status.BadNotWritable
	}
	v, st := v.Convert(t.Type)
	if st == status.Good {
		st = t.checkWrite(v)
	}
	if st != status.Good {
		return st
	}
	e.wmu.RLock()
	defer e.wmu.RUnlock()
	if e.state.Load() == stateStopped {
		return status.BadShutdown
	}
	select {
	case e.writes <- writeReq{h: h, v: v, done: done, queued: time.Now().UnixNano()}:
		return status.Good
	default:
		return status.BadResourceUnavailable
	}
}

// Run runs the cycle until ctx is done, then waits for the device
// goroutines to return (a driver must honour its context) and returns
// nil. It may be called once.
//
// Cycle n is due at start + (n-1)·Period, on absolute deadlines, so the
// schedule does not drift. If Run's goroutine wakes a whole period or more
// after a cycle's deadline, that cycle and any other whose slot has passed
// are counted as overruns and skipped: the next cycle run is the one whose
// slot contains now, never two in a row to catch up.
func (e *Engine) Run(ctx context.Context) error {
	e.reMu.Lock() // a Reconfigure before Run finishes first
	if !e.state.CompareAndSwap(stateNew, stateRunning) {
		e.reMu.Unlock()
		return errors.New("plc: Run called twice")
	}
	e.reMu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.start(ctx)
	defer e.stop()

	w := e.newWaiter()
	defer w.close()
	t0 := time.Now()
	for n := uint64(1); ; n++ {
		due := t0.Add(time.Duration(n-1) * e.period)
		if !w.wait(ctx, due) {
			return nil
		}
		if e.stall.Load() {
			<-ctx.Done()
			return nil
		}
		now := time.Now()
		late := now.Sub(due)
		w.woke(late)
		if late >= e.period { // cycles missed: overruns, skipped
			skip := uint64(late / e.period)
			e.dmu.Lock()
			e.overruns += skip
			e.dmu.Unlock()
			n += skip
			late -= time.Duration(skip) * e.period
		}
		e.cycle(ctx, n, now)
		end := time.Now()
		e.record(n, end.Sub(now), late)
		w.cycled(t0.Add(time.Duration(n)*e.period), end)
	}
}

// busyLate is how late a cycle's wake-up on the timerfd may come before
// the engine takes the process for a busy one and, for busyCycles
// cycles, waits as without a timerfd: under load Go looks at its poller
// seldom, and the timerfd read's deadline wakes the goroutine on time
// but leaves it to wait for a P, where a thread in nanosleep keeps its
// own until the end (bench-fanout, the robustness suite's subscription
// flood).
//
// quietLate is how late a wake-up may come and still count as on time:
// after quietCycles of them in a row the timerfd's read has no deadline
// until one comes later. The deadline's runtime timer wakes the
// runtime's monitor thread, which sleeps until the next timer while the
// process is idle, in every cycle: two context switches a cycle for
// nothing. Quiet, the first wake-up of a load
// that starts may come late (docs/performance.md, Idle).
//
// A wake-up later than quietLate counts as late only if the process was
// loaded while it waited (see loaded): a host that runs the process's
// thread late (a virtual machine's halted CPU, a busier process)
// delays nanosleep and the deadline's timer as much as the timerfd, and
// the busy waits' system calls and the deadlines' runtime timers wake
// the runtime's monitor thread: many context switches a second while
// idle (docs/performance.md, Idle).
const (
	busyLate    = time.Millisecond
	busyCycles  = 200
	quietLate   = 250 * time.Microsecond
	quietCycles = 200
)

// loaded reports whether a process that used cpu of CPU time while the
// engine waited for a cycle that began late was busy: for at least half
// as long as the lateness. An idle process (a few µs of CPU while it
// waits) is not, one that serves a load is (bench-fanout: milliseconds
// of a 5 ms wait).
func loaded(cpu, late time.Duration) bool { return 2*cpu >= late }

// takeReconf applies a change that Reconfigure is waiting to hand over
// (with OwnThreadWait, between two cycles).
func (e *Engine) takeReconf(ctx context.Context) {
	select {
	case p := <-e.reconf:
		e.applyPlan(ctx, p)
	default:
	}
}

// start starts the device goroutines and the clocks of the tag state.
func (e *Engine) start(ctx context.Context) {
	now := time.Now().UnixNano()
	for i := range e.lastOK {
		e.lastOK[i] = now
	}
	e.collect = time.NewTimer(time.Hour)
	e.collect.Stop()
	for _, d := range e.devs {
		e.wg.Add(1)
		go e.worker(ctx, d)
	}
}

// stop ends the device goroutines and fails the writes still queued.
// The results of polls that were running are dropped: their context was
// cancelled, so their errors say nothing about the devices.
func (e *Engine) stop() {
	e.wmu.Lock()
	e.state.Store(stateStopped)
	e.wmu.Unlock()
	for _, d := range e.devs {
		close(d.jobs)
	}
	for _, d := range e.retiring {
		close(d.jobs) // its last job's result is dropped below
	}
	e.retiring = nil
	e.wg.Wait()
	for {
		select {
		case j := <-e.results: // a poll cut short by the shutdown: dropped
			for i := range j.writes {
				if w := &j.writes[i]; w.done != nil {
					w.done(w.result) // what the device answered
				}
			}
			continue
		case w := <-e.writes:
			e.queueWrite(w)
			continue
		default:
		}
		break
	}
	e.answerWrites() // performed; no image will follow
	for _, d := range e.devs {
		for _, w := range d.pending {
			if w.done != nil {
				w.done(status.BadShutdown)
			}
		}
		d.pending = d.pending[:0]
	}
	close(e.stopped)
}

// worker runs the jobs of device d.
func (e *Engine) worker(ctx context.Context, d *device) {
	defer e.wg.Done()
	defer close(d.exited)
	cc := newCallCtx(ctx)
	for j := range d.jobs {
		e.runJob(cc, d, j)
		e.results <- j
	}
}

// runJob performs j, d's job: its writes, then its poll.
func (e *Engine) runJob(cc *callCtx, d *device, j *job) {
	j.start = time.Now()
	for i := range j.writes {
		w := &j.writes[i]
		cc.begin(time.Now().Add(e.pollTimeout))
		w.result = StatusOf(d.dev.Write(cc, w.h, w.v))
		cc.end()
	}
	j.err = nil
	if len(j.due) > 0 {
		cc.begin(time.Now().Add(e.pollTimeout))
		j.err = d.dev.Poll(cc, j.due, j.out)
		cc.end()
	}
	j.end = time.Now()
}

// idle handles results and writes until c fires; false when ctx ends.
func (e *Engine) idle(ctx context.Context, c <-chan time.Time) bool {
	for {
		select {
		case <-c:
			return true
		case j := <-e.results:
			e.merge(j)
		case w := <-e.writes:
			e.queueWrite(w)
		case p := <-e.reconf:
			e.applyPlan(ctx, p)
		case <-ctx.Done():
			return false
		}
	}
}

// cycle runs cycle n, which started at now: it starts the due polls and
// writes, waits for them up to CollectTimeout and publishes the image.
func (e *Engine) cycle(ctx context.Context, n uint64, now time.Time) {
	nowNs := now.UnixNano()
	for drained := false; !drained; {
		select {
		case j := <-e.results:
			e.merge(j)
		case w := <-e.writes:
			e.queueWrite(w)
		default:
			drained = true
		}
	}
	outstanding := 0
	for _, d := range e.devs {
		if d.busy {
			if len(d.pending) > 0 || d.due(n) {
				d.skipped.Add(1)
			}
			e.expireWrites(d, nowNs)
			if !d.hung && nowNs-d.job.dispatched > int64(e.pollTimeout) {
				d.hung = true
				e.deviceDown(d, nowNs)
			}
			continue
		}
		j := d.job
		j.due = j.due[:0]
		for ci := range d.classes {
			c := &d.classes[ci]
			if n >= c.next {
				j.due = append(j.due, c.handles...)
				c.next = n - (n-1)%c.every + c.every
			}
		}
		j.writes = append(j.writes[:0], d.pending...)
		clear(d.pending)
		d.pending = d.pending[:0]
		// Read written tags back in the same poll, whatever their class.
		for i := range j.writes {
			h := j.writes[i].h
			if e.dueMark[h] != n && !slices.Contains(j.due, h) {
				j.due = append(j.due, h)
			}
			e.dueMark[h] = n
		}
		if len(j.due) == 0 && len(j.writes) == 0 {
			continue
		}
		j.out = j.out[:len(j.due)]
		clear(j.out)
		j.cycle, j.dispatched = n, nowNs
		d.busy = true
		d.busyNow.Store(true)
		if d.inline {
			if d.cc == nil {
				d.cc = newCallCtx(ctx)
			}
			e.runJob(d.cc, d, j)
			e.merge(j)
			continue
		}
		d.jobs <- j
		outstanding++
	}
	for _, d := range e.devs {
		if d.failing {
			e.checkStale(d, nowNs)
		}
	}
	if outstanding > 0 {
		e.collect.Reset(e.collectTimeout - time.Since(now))
	wait:
		for outstanding > 0 {
			select {
			case j := <-e.results:
				if j.cycle == n {
					outstanding--
				}
				e.merge(j)
			case w := <-e.writes:
				e.queueWrite(w)
			case <-e.collect.C:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
		e.collect.Stop()
	}
	e.publish(n, nowNs)
}

// due reports whether a class of d is due in cycle n.
func (d *device) due(n uint64) bool {
	for i := range d.classes {
		if n >= d.classes[i].next {
			return true
		}
	}
	return false
}

func (e *Engine) queueWrite(w writeReq) {
	if int(w.h) >= len(e.tagDev) || e.tagDev[w.h] < 0 {
		// Its tag was removed after Write took it.
		if w.done != nil {
			w.done(status.BadNodeIDUnknown)
		}
		return
	}
	d := e.devs[e.tagDev[w.h]]
	d.pending = append(d.pending, w)
}

// expireWrites fails the writes that waited for busy device d too long.
func (e *Engine) expireWrites(d *device, nowNs int64) {
	keep := d.pending[:0]
	for _, w := range d.pending {
		if nowNs-w.queued >= int64(e.writeTimeout) {
			d.writes.Add(1)
			d.writeErrors.Add(1)
			if w.done != nil {
				w.done(status.BadTimeout)
			}
			continue
		}
		keep = append(keep, w)
	}
	clear(d.pending[len(keep):])
	d.pending = keep
}

// merge takes in a finished job.
func (e *Engine) merge(j *job) {
	d := j.d
	if d.retired {
		e.mergeRetired(j)
		return
	}
	d.busy, d.hung = false, false
	d.busyNow.Store(false)
	for i := range j.writes {
		w := &j.writes[i]
		d.writes.Add(1)
		switch {
		case w.result != status.Good:
			d.writeErrors.Add(1)
			if w.done != nil {
				w.done(w.result)
			}
		case w.done != nil:
			// Answered once the image that holds the read-back is out.
			e.acked = append(e.acked, w.done)
		}
	}
	clear(j.writes) // drop the done funcs
	j.writes = j.writes[:0]
	if len(j.due) == 0 {
		return
	}
	d.polls.Add(1)
	d.pollTime.Store(int64(j.end.Sub(j.start)))
	endNs := j.end.UnixNano()
	if j.err != nil {
		d.pollErrors.Add(1)
		st := StatusOf(j.err)
		if IsCommunication(st) {
			e.deviceDown(d, endNs)
			return
		}
		if !st.IsBad() {
			st = status.BadUnexpectedError
		}
		d.failing = false
		d.failingNow.Store(false)
		for _, h := range j.due {
			e.set(h, Value{}, st, endNs)
			e.lastOK[h] = endNs
		}
		return
	}
	d.failing = false
	d.failingNow.Store(false)
	for i, h := range j.due {
		e.apply(h, &j.out[i], endNs)
	}
}

// apply stores sample s of tag h, read by a poll that ended at endNs.
func (e *Engine) apply(h Handle, s *Sample, endNs int64) {
	ts := endNs
	if s.Time != 0 {
		ts = s.Time
	}
	st := s.Status
	switch {
	case IsCommunication(st):
		e.commFail(h, endNs)
		return
	case st.IsBad():
		e.set(h, Value{}, st, ts)
		e.lastOK[h] = endNs
		return
	}
	v := s.Value
	if t := e.tags[h].Type; v.typ != t {
		var cst Status
		if v, cst = v.Convert(t); cst != status.Good {
			e.set(h, Value{}, cst, ts)
			e.lastOK[h] = endNs
			return
		}
	}
	e.set(h, v, st, ts) // st is not Bad: the last usable value now
	e.lastOK[h] = endNs
	if len(e.lastGood) > 0 {
		delete(e.lastGood, h)
	}
	if sl := e.work.slot[h]; sl >= 0 {
		e.lastStr[sl] = v.str
	}
}

// deviceDown marks every tag of d as not answering.
func (e *Engine) deviceDown(d *device, nowNs int64) {
	d.failing = true
	d.failingNow.Store(true)
	for _, h := range d.handles {
		e.commFail(h, nowNs)
	}
}

// commFail sets tag h after its source did not answer: the last usable
// value as status.UncertainLastUsableValue with its original source timestamp,
// status.BadWaitingForInitialData if there is none, and status.BadNoCommunication (no
// value, the time it was recognized) once the source has been silent for
// NoCommAfter.
func (e *Engine) commFail(h Handle, nowNs int64) {
	if nowNs-e.lastOK[h] >= int64(e.noCommAfter) {
		if e.work.entries[h].status != status.BadNoCommunication {
			e.set(h, Value{}, status.BadNoCommunication, nowNs)
		}
		return
	}
	last, ok := lastValue{}, false
	if cur := &e.work.entries[h]; !cur.status.IsBad() {
		last, ok = lastValue{bits: cur.bits, ts: cur.ts, typ: cur.typ}, true
	} else {
		last, ok = e.lastGood[h]
	}
	if !ok {
		e.set(h, Value{}, status.BadWaitingForInitialData, 0)
		return
	}
	v := Value{bits: last.bits, typ: last.typ}
	if sl := e.work.slot[h]; sl >= 0 {
		v.str = e.lastStr[sl]
	}
	e.set(h, v, status.UncertainLastUsableValue, last.ts)
}

// checkStale moves the tags of failing device d to status.BadNoCommunication
// when their time has come.
func (e *Engine) checkStale(d *device, nowNs int64) {
	for _, h := range d.handles {
		if st := e.work.entries[h].status; st != status.BadNoCommunication && nowNs-e.lastOK[h] >= int64(e.noCommAfter) {
			e.commFail(h, nowNs)
		}
	}
}

// set sets tag h's state and notes the change for Image.Changed.
func (e *Engine) set(h Handle, v Value, st Status, ts int64) {
	ne := entry{bits: v.bits, ts: ts, status: st, typ: v.typ}
	sl := e.work.slot[h]
	if e.work.entries[h] == ne && (sl < 0 || e.work.strs[sl] == v.str) {
		return
	}
	if e.next == nil {
		e.claimNext()
	}
	old := &e.work.entries[h]
	if st.IsBad() && !old.status.IsBad() {
		// The last usable value leaves the image: kept for commFail.
		e.lastGood[h] = lastValue{bits: old.bits, ts: old.ts, typ: old.typ}
	}
	*old = ne
	if sl >= 0 {
		e.work.strs[sl] = v.str
	}
	if e.marked[h] != e.pubSeq+1 {
		e.marked[h] = e.pubSeq + 1
		e.changed = append(e.changed, h)
	}
}

// publish swaps in the image the cycle wrote (next) and claims the one
// it replaced, or another, to write the next cycle into.
func (e *Engine) publish(n uint64, nowNs int64) {
	if e.next == nil { // nothing changed since the last publish
		e.claimNext()
	}
	prev := e.cur.Load()
	im := e.next // claimed: no reader has it (see Image)
	im.state.slot = e.work.slot
	im.cycle, im.time = n, nowNs
	// Keep the tags that differ from the previous image (a tag may have
	// changed and changed back between two publishes).
	if cap(im.changed) < len(e.changed) {
		im.changed = make([]Handle, 0, len(e.work.entries))
		im.values = make([]Handle, 0, len(e.work.entries))
	}
	im.changed, im.values = im.changed[:0], im.values[:0]
	for _, h := range e.changed {
		if int(h) >= len(prev.state.entries) {
			im.changed = append(im.changed, h)
			im.values = append(im.values, h)
			continue
		}
		pe, we := prev.state.entries[h], e.work.entries[h]
		text := prev.state.text(h) != e.work.text(h)
		if pe != we || text {
			im.changed = append(im.changed, h)
			if pe.bits != we.bits || pe.status != we.status || pe.typ != we.typ || text {
				im.values = append(im.values, h)
			}
		}
	}
	e.changed = e.changed[:0]
	e.pubSeq++
	im.pin.Store(pinFree) // after the writes above, before the swap
	e.cur.Store(im)
	// The next image is claimed at the first write after this publish
	// (set, applyPlan), most often a cycle later: a reader that held prev
	// across the swap has released it by then. Until that write, work is
	// the published image's state, read but not written.
	e.next, e.replaced = nil, prev
	e.lastPublish.Store(time.Now().UnixNano())
	e.answerWrites()
	for _, s := range *e.subs.Load() {
		s.fn(im)
	}
}

// claimNext makes next, and work its state, a claimed image equal to the
// current one, cur, which replaced prev: prev itself unless a reader
// holds it (it then differs from cur in cur's Changed tags alone), else
// an image readers held earlier and released since, else a new one (both
// copied whole). Two images suffice while no reader holds one for a
// cycle.
func (e *Engine) claimNext() {
	prev, cur := e.replaced, e.cur.Load()
	e.replaced = nil
	im, whole := prev, false
	if prev.pin.CompareAndSwap(pinFree, pinClaimed) {
		e.recycled.Add(1)
		if e.calm++; e.calm%CalmPublishes == 0 {
			e.forgetReleased()
		}
	} else {
		e.calm = 0
		if prev.pin.Load()&pinKept == 0 {
			if len(e.held) == maxHeld {
				e.held = append(e.held[:0], e.held[1:]...) // forget the oldest
			}
			e.held = append(e.held, prev)
		}
		im, whole = e.reclaim(), true
		if im == nil {
			e.allocated.Add(1)
		}
	}
	if im == nil || len(im.state.entries) != len(cur.state.entries) || len(im.state.strs) != len(cur.state.strs) {
		im, whole = e.newImage(), true // work is cur's state: its sizes (or Reconfigure changed the tags)
	}
	// When most tags changed, one copy of everything is cheaper than a
	// copy per tag.
	if whole || len(cur.changed) > len(cur.state.entries)/4 {
		copy(im.state.entries, cur.state.entries)
		copy(im.state.strs, cur.state.strs)
	} else {
		for _, h := range cur.changed {
			im.state.entries[h] = cur.state.entries[h]
			if sl := cur.state.slot[h]; sl >= 0 {
				im.state.strs[sl] = cur.state.strs[sl]
			}
		}
	}
	im.state.slot = cur.state.slot
	e.next, e.work = im, im.state
}

// maxHeld bounds the replaced images the engine waits for readers to
// release (Engine.Acquire); one beyond it is left to the collector.
const maxHeld = 4

// CalmPublishes is how many publishes in a row that reused the image
// they replaced make the engine forget the released images it set
// aside for reuse: at idle it keeps two images. (On a start with 10,000
// tags, readers that held images across the first publishes had left it
// one to three more, 240 KB each, for good.)
const CalmPublishes = 256

// forgetReleased leaves to the collector the images set aside that their
// readers released, and those kept for good.
func (e *Engine) forgetReleased() {
	keep := e.held[:0]
	for _, im := range e.held {
		if p := im.pin.Load(); p != pinFree && p&pinKept == 0 {
			keep = append(keep, im)
		}
	}
	clear(e.held[len(keep):])
	e.held = keep
}

// reclaim claims one of the images readers held when they were replaced
// and have released since, nil if none; it forgets those kept for good.
func (e *Engine) reclaim() *Image {
	var got *Image
	keep := e.held[:0]
	for _, im := range e.held {
		switch {
		case got == nil && im.pin.CompareAndSwap(pinFree, pinClaimed):
			got = im
			e.recycled.Add(1)
		case im.pin.Load()&pinKept == 0:
			keep = append(keep, im)
		}
	}
	clear(e.held[len(keep):])
	e.held = keep
	return got
}

// answerWrites answers Good to the writes the devices performed since
// the last publish.
func (e *Engine) answerWrites() {
	for i, done := range e.acked {
		done(status.Good)
		e.acked[i] = nil
	}
	e.acked = e.acked[:0]
}
