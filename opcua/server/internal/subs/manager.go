// Package subs is the subscription engine of opcua/server: the
// Subscription and MonitoredItem service sets (OPC 10000-4 §5.13, §5.12)
// and the sampling and publishing behind them. The server builds one
// Manager with New from Deps, calls its service methods from its service
// table with the request's Session, and tells it of every image of a
// value source with SourceChanged. How it works is in docs/server.md.
package subs

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// One goroutine, the subscription manager's run loop, owns every
// subscription, monitored item and queued Publish request of the server,
// as quic-go's connection run loop owns its state: the connection
// goroutines hand it the subscription services as closures (Manager.call)
// and wait for them, except Publish, whose closure queues the request and
// returns at once, so the connection goes on reading; the run loop later
// answers the Publish with the channel's PostResponse, which frames the
// response and leaves the write to a goroutine of the channel, so that a
// client that stops reading stalls no other subscription. The Read path
// never touches the manager: it stays allocation-free.
//
// The run loop wakes for: a service call; a source change
// (Server.SourceChanged, called by the binding on every image the scan
// engine publishes); and its one timer, set to the earliest publishing
// cycle of any subscription (keep-alives, lifetimes) or sample of an item
// without a source (item.go). A subscription whose publishing cycle is
// due (or ran idle just before the image, see catchUp) when a source change
// brings it notifications answers a waiting Publish request at once.

// ErrAsync is returned by a handler whose response is sent later (Publish):
// the connection writes nothing for the request.
var ErrAsync = asyncError{}

type asyncError struct{}

func (asyncError) Error() string { return "server: response is sent asynchronously" }

// Session is what the engine knows of a session. The server's session
// table owns the session and its state; the engine only reads it, and
// keys its own per-session state (subscriptions, queued Publish requests)
// by it.
type Session interface {
	// ChannelID is the secure channel the session is bound to now.
	ChannelID() uint32
	// Closed reports whether the session was closed or timed out.
	Closed() bool
	// Detached reports whether the session's channel closed and no other
	// channel took the session over: its client is gone, and may come
	// back within the session's timeout.
	Detached() bool
	// User is the session's user identity, a comparable value:
	// TransferSubscriptions moves subscriptions between sessions of one
	// user only.
	User() any
}

// Channel is where a Publish request came from and where its answer goes
// (*uasc.Channel is one). PostResponse frames the response and leaves the
// write to the channel, so a client that stops reading stalls nobody.
type Channel interface {
	ID() uint32
	PostResponse(requestID uint32, msg []byte) error
}

// Deps is what the engine needs of the server.
type Deps struct {
	Space  *addrspace.Space
	Limits Limits // with defaults (Limits.WithDefaults)
	Clock  func() time.Time
	// Go runs f on a goroutine that the server's Shutdown waits for, and
	// reports false (running nothing) once the server shuts down.
	Go func(f func()) bool
	// Done is closed when the server shuts down: the run loop ends and
	// service calls answer Bad_Shutdown.
	Done <-chan struct{}
	// Events are the event types event filters are compiled against; nil:
	// no event items (Bad_EventFilterInvalid).
	Events *events.Types
	// Receives, when set, reports whether the session of a subscription
	// may receive event ev (the server's check of its roles).
	Receives func(s Session, ev events.Event) bool
}

// yieldEvery is how long the run loop may work without yielding (see
// yield); the same as a connection's goroutine.
const yieldEvery = 500 * time.Microsecond

// maxPendingChanges bounds the changes SourceChanged accumulates while the
// run loop is busy; beyond it the next round samples every item on a
// source instead.
const maxPendingChanges = 1 << 18

// srcKey identifies an external variable: its source and handle.
type srcKey struct {
	src addrspace.SourceID
	h   uint32
}

// pubReq is a queued Publish request. Its channel may close, or the
// session may move to another channel (ActivateSession), while it waits:
// such a request is stale and never carries notifications (they would be
// taken from the item queues and lost with the response); see
// Manager.hasRequest and Manager.sessionMoved.
type pubReq struct {
	ch       Channel
	reqID    uint32
	handle   uint32
	deadline time.Time // zero: no timeout hint
	results  []ua.StatusCode
}

// statusMsg is a StatusChangeNotification waiting for a Publish request of
// the session (a subscription that timed out, or moved to another session).
type statusMsg struct {
	subID  uint32
	seq    uint32
	status ua.StatusCode
}

// sessSubs is the subscription state of one session.
type sessSubs struct {
	sess    Session
	subs    []*subscription
	queue   []pubReq
	pending []statusMsg
	// credit: the session's share of the sampling budget, once
	// refilled; backlog: items due beyond it, oldest first (budget.go).
	credit   float64
	refilled bool
	backlog  []*monItem
	// orphan: the session closed (CloseSession without
	// DeleteSubscriptions, or it timed out) and its subscriptions live on
	// until they expire or are transferred; see sessionClosed.
	orphan bool
}

// Manager is the server's subscription manager; see above.
type Manager struct {
	space     *addrspace.Space
	events    *events.Types
	receives  func(Session, events.Event) bool
	lim       Limits
	clock     func() time.Time
	goTracked func(func()) bool
	done      <-chan struct{}

	// The ServerDiagnosticsSummary counters of subscriptions (see Counts).
	current, cumulated atomic.Uint32
	removed            atomic.Uint64 // monitored items deleted so far (see Removed)
	created            atomic.Uint64 // monitored items created so far (see Created)

	once  sync.Once
	calls chan func()
	wake  chan struct{}

	active atomic.Bool // a subscription was ever created: SourceChanged has work
	// tsTrigger: an item with DataChangeTrigger StatusValueTimestamp was
	// ever created; SourceValuesChanged samples every change since.
	tsTrigger atomic.Bool

	hookMu  sync.Mutex
	changed []srcKey   // accumulated by SourceChanged, drained by the run loop
	batches []srcBatch // per SourceChanged call: its image and end in changed
	overrun bool       // changed reached maxPendingChanges: sample every indexed item

	srcMu   sync.Mutex                              // serializes updates of sources
	sources atomic.Pointer[[]addrspace.ValueSource] // by SourceID-1, as SourceChanged met them
	indexed atomic.Bool                             // bySource has items (as of the run loop's last round)

	// Owned by the run loop.
	nextSubID   uint32
	nextItemID  uint32
	subs        map[uint32]*subscription
	sessions    map[Session]*sessSubs
	bySource    map[srcKey][]*monItem
	eventItems  []*monItem          // the event items, deleted ones too until prune
	stale       map[srcKey]struct{} // sources whose lists hold deleted items (prune)
	work        []srcKey
	workB       []srcBatch
	deferred    []*monItem // changed but not due yet (sampling interval above the tag's period)
	due         dueHeap    // items without a source, by next sample
	touched     []*subscription
	rc          addrspace.ReadContext
	free        []*sample          // samples for reuse (newSample)
	touchSum    uintptr            // touch's loads, kept so that they are made
	avail       []uint32           // AvailableSequenceNumbers of the response being sent
	triggered   []*monItem         // publishTo's items reported by SetTriggering
	resp        ua.PublishResponse // publishTo's and keepAliveTo's, encoded by send
	out         []byte
	timer       *time.Timer
	itemCount   int       // monitored items of all subscriptions (MaxMonitoredItems)
	batchSeq    uint64    // SourceChanged calls so far (under hookMu): srcBatch.seq
	queuedCount int       // notifications in all items' queues (MaxQueuedNotifications)
	yielded     time.Time // when the run loop last yielded (see yield)

	// The sampling budget (budget.go): the samples it has left, and
	// when it was last refilled.
	credit   float64
	refilled time.Time
	draining bool                   // backlogs wait and the budget has samples left: drain them between calls
	drained  map[srcKey]drainedRead // the Reads one drain shares (sampleBacklog)
	// retransBytes: the encoded notifications in all retransmission
	// queues (MaxRetransmissionBytes).
	retransBytes int
	sizeBuf      []byte // retainedBytes' encoding
}

// Counts returns the current and the cumulated number of subscriptions:
// CreateSubscription adds one to both, every deletion (DeleteSubscriptions,
// lifetime expiry, the session's end) takes one from the current count, a
// transfer to another session changes neither.
func (m *Manager) Counts() (current, cumulated uint32) {
	return m.current.Load(), m.cumulated.Load()
}

// Removed returns the number of monitored items deleted so far, all told:
// when it grew by many since the last look, their memory can go back to
// the OS.
func (m *Manager) Removed() uint64 { return m.removed.Load() }

// Created returns the number of monitored items created so far, all told:
// when it grew by many since the last look, the garbage of their requests
// can go back to the OS.
func (m *Manager) Created() uint64 { return m.created.Load() }

// New returns the engine of a server; its run loop starts with the first
// service call.
func New(d Deps) *Manager {
	m := &Manager{space: d.Space, events: d.Events, receives: d.Receives, lim: d.Limits, clock: d.Clock, goTracked: d.Go, done: d.Done}
	m.calls = make(chan func())
	m.wake = make(chan struct{}, 1)
	m.subs = make(map[uint32]*subscription)
	m.sessions = make(map[Session]*sessSubs)
	m.bySource = make(map[srcKey][]*monItem)
	m.stale = make(map[srcKey]struct{})
	m.drained = make(map[srcKey]drainedRead)
	return m
}

// start starts the run loop once; it reports false after Shutdown.
func (m *Manager) start() {
	m.once.Do(func() {
		m.timer = time.NewTimer(time.Hour)
		m.goTracked(m.run)
	})
}

// call runs f on the run loop and waits for it; it returns Bad_Shutdown
// when the server shut down.
func (m *Manager) call(f func()) error {
	m.start()
	done := make(chan struct{})
	select {
	case m.calls <- func() { f(); close(done) }:
	case <-m.done:
		return status.BadShutdown
	}
	<-done
	return nil
}

// alwaysReady is a closed channel: a select case on it is always ready.
var alwaysReady = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (m *Manager) run() {
	for {
		// With backlogs to sample in this round, one slice of them is
		// one more ready case: service calls and source changes that
		// wait are taken between slices.
		var drain <-chan struct{}
		if m.draining {
			drain = alwaysReady
		}
		select {
		case f := <-m.calls:
			f()
		case <-m.wake:
			m.takeCalls()
			m.sourceChanges(time.Now())
		case <-m.timer.C:
		case <-m.done:
			m.timer.Stop()
			return
		case <-drain:
			now := time.Now()
			m.draining = m.drainBacklogs(now, drainSlice)
			m.publishTouched(now)
			continue
		}
		m.prune()
		m.tick(time.Now())
		m.indexed.Store(len(m.bySource) > 0)
		// Calls that wait one after another keep the loop from blocking:
		// the scan engine's cycle must not wait for the last of them.
		m.yield()
	}
}

// maxTaken bounds the calls takeCalls runs before a round.
const maxTaken = 64

// takeCalls runs the service calls that wait for the run loop, before a
// round of source changes. A round can be milliseconds of work, and the
// run loop's select picks at random among what is ready: a Publish
// request that waited behind rounds let the items' queues fill, a full
// queue made each sample dearer, the rounds longer and the Publish
// requests later still, until the subscriptions delivered a fraction of
// their notifications (bench-fanout). A connection sends one call at a
// time; maxTaken bounds the calls taken so with many connections.
func (m *Manager) takeCalls() {
	for range maxTaken {
		select {
		case f := <-m.calls:
			f()
			m.yield()
		default:
			return
		}
	}
}

// SourceChanged tells the server that the variables with the handles in
// changed of ValueSource src have new values (or statuses, or source
// timestamps) in the source's current snapshot. The binding calls it from
// plc.Engine.Subscribe on every image the engine publishes, with
// Image.Changed. It copies the handles, takes the source's snapshot (the
// image that carried the changes) and returns at once: the monitored
// items on those variables that are due in this cycle are sampled in that
// snapshot on the subscription manager's goroutine, so that each image's
// change is sampled even when the next image comes before the manager
// runs, and a subscription that is due answers a waiting Publish request
// at once. Work per call is
// proportional to len(changed); nothing is done while no subscription was
// ever created. Safe from any goroutine; it does not allocate once its
// buffer has grown.
func (m *Manager) SourceChanged(src addrspace.SourceID, changed []uint32) {
	if !m.active.Load() || len(changed) == 0 {
		return
	}
	// The image that carried the change: the items sample it, not the
	// image current when the run loop gets to them, so that a change is
	// not lost when the next image comes first.
	var snap addrspace.Snapshot
	if m.indexed.Load() { // else keep the image free for the engine's reuse
		if vs := m.source(src); vs != nil {
			snap = vs.Snapshot()
		}
	}
	m.hookMu.Lock()
	if len(m.changed)+len(changed) > maxPendingChanges {
		m.overrun = true // the run loop is behind: bound the memory
		addrspace.ReleaseSnapshot(snap)
	} else {
		for _, h := range changed {
			m.changed = append(m.changed, srcKey{src, h})
		}
		m.addBatch(src, snap)
	}
	m.hookMu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// SourceValuesChanged is SourceChanged with values, the handles of
// changed whose value or status changed: until an item reports source
// timestamp changes (tsTrigger), the items' triggers ignore what values
// leaves out, so only values is sampled.
func (m *Manager) SourceValuesChanged(src addrspace.SourceID, changed, values []uint32) {
	if !m.tsTrigger.Load() {
		changed = values
	}
	m.SourceChanged(src, changed)
}

// itemCount returns the monitored items of all the session's subscriptions.
func (ss *sessSubs) itemCount() int {
	n := 0
	for _, sub := range ss.subs {
		n += len(sub.items)
	}
	return n
}

// sessionState returns the state of s, created on first use.
func (m *Manager) sessionState(s Session) *sessSubs {
	ss := m.sessions[s]
	if ss == nil {
		ss = &sessSubs{sess: s}
		m.sessions[s] = ss
	}
	return ss
}

// sourceChanges samples the items on the changed variables that are due.
func (m *Manager) sourceChanges(now time.Time) {
	m.hookMu.Lock()
	m.work, m.changed = m.changed, m.work[:0]
	m.workB, m.batches = m.batches, m.workB[:0]
	overrun := m.overrun
	m.overrun = false
	m.hookMu.Unlock()
	if overrun {
		// Changes were dropped: look at every item on a source once, in
		// the current images.
		m.work = m.work[:0]
		for k := range m.bySource {
			m.work = append(m.work, k)
		}
		releaseBatches(m.workB)
		m.workB = append(m.workB[:0], srcBatch{end: len(m.work), seq: math.MaxUint64})
	}
	m.refill(now)
	slack := m.lim.MinPublishingInterval / 2
	start := 0
	for _, b := range m.workB {
		m.rc.Reset()
		m.rc.UseSnapshot(m.space, b.src, b.snap)
		for i, k := range m.work[start:b.end] {
			m.sampleKey(k, b.seq, now, slack)
			if i%64 == 63 {
				m.yield()
			}
		}
		start = b.end
	}
	m.rc.Reset()
	releaseBatches(m.workB) // let the images go
	if len(m.deferred) > 0 {
		keep := m.deferred[:0]
		for _, it := range m.deferred {
			switch {
			case it.deleted:
				it.deferred = false
			case it.due(now, slack):
				it.deferred = false
				m.sample(it, now)
			default:
				keep = append(keep, it)
			}
		}
		clear(m.deferred[len(keep):])
		m.deferred = keep
	}
	m.draining = m.drainBacklogs(now, math.MaxInt)
	m.publishTouched(now)
}

// publishTouched runs the publishing cycles of the subscriptions that have
// new notifications and are due, or ran idle just before them (catchUp).
// Due allows the image's phase: a cycle at most one base cycle away
// (phaseSlack) runs with the image rather than a moment after it.
func (m *Manager) publishTouched(now time.Time) {
	for i := 0; i < len(m.touched); i++ { // cycle may touch more
		sub := m.touched[i]
		slack := m.phaseSlack(sub)
		switch {
		case sub.deleted:
		case !now.Before(sub.next.Add(-slack)):
			m.cycle(sub, now)
		case !sub.idleAt.IsZero() && now.Before(sub.idleAt.Add(slack)):
			m.catchUp(sub, now)
		}
		m.yield()
	}
	m.clearTouched()
}

// phaseSlack is how far an image may be from sub's publishing cycle and
// still count as the image that cycle waits for: the images come every
// base cycle, at their own phase, so one base cycle, and at most half an
// interval (at a 5 ms interval, 2.5 ms). Messages with data are then at
// least an interval less this apart, and a publishing interval of 1 s
// sends one message a second, not two (OPC 10000-4 §5.13.1: the interval
// is the rate at which notifications are returned).
func (m *Manager) phaseSlack(sub *subscription) time.Duration {
	return min(sub.interval/2, m.lim.MinPublishingInterval)
}

// yield lets the other goroutines run once the run loop has worked for
// yieldEvery without yielding. With as many subscriptions and items as
// the fan-out bench has, a round of source changes is milliseconds of work;
// on a gateway with one core (GOMAXPROCS 1) the scan engine's next cycle
// would wait for it, up to the scheduler's 10 ms preemption. The scan
// cycle comes first: the run loop yields between keys and between
// subscriptions, and notifications come later instead.
func (m *Manager) yield() {
	if now := time.Now(); now.Sub(m.yielded) >= yieldEvery {
		runtime.Gosched()
		m.yielded = time.Now()
	}
}

// catchUp publishes the notifications of an image that arrived just after
// an idle publishing cycle of sub (idleAt, less than phaseSlack ago),
// as if that cycle had run now: the publishing timer and the engine's
// images both run at the base cycle, so the timer often fires a moment
// before the image it waits for; without this, the image's changes would
// wait one whole publishing interval. The cycle moves to now, so the
// subscription's cycles follow the images from then on, and messages with
// data stay at least a publishing interval apart (the last one was at least
// an interval before idleAt). Keep-alive and lifetime counting are the
// idle cycle's, already done.
func (m *Manager) catchUp(sub *subscription, now time.Time) {
	sub.idleAt = time.Time{}
	if !sub.enabled || !sub.hasNotifications() {
		return
	}
	sub.next = now.Add(sub.interval)
	if m.hasRequest(sub.ss, now) {
		m.publishTo(sub, now)
		return
	}
	sub.late = true
}

// clearTouched empties the list of subscriptions with new notifications.
func (m *Manager) clearTouched() {
	for _, sub := range m.touched {
		sub.touched = false
	}
	clear(m.touched)
	m.touched = m.touched[:0]
}

// tick runs the publishing cycles that are due, drops closed sessions and
// timed-out Publish requests, and sets the timer to the next cycle.
func (m *Manager) tick(now time.Time) {
	m.refill(now)
	m.sampleDue(now)
	m.draining = m.drainBacklogs(now, drainSlice)
	next := now.Add(time.Hour)
	if m.hasBacklog() {
		next = now.Add(m.lim.MinPublishingInterval / 2) // budget for more of it
	}
	for s, ss := range m.sessions {
		if s.Closed() && !ss.orphan {
			m.sessionClosed(ss, false, now) // timed out: the subscriptions stay
			if len(ss.subs) == 0 {
				continue
			}
		}
		for len(ss.queue) > 0 && !ss.queue[0].deadline.IsZero() && now.After(ss.queue[0].deadline) {
			m.fail(ss.queue[0], status.BadTimeout, now)
			ss.queue = ss.queue[1:]
		}
		for i := 0; i < len(ss.subs); i++ {
			sub := ss.subs[i]
			if !now.Before(sub.next) {
				m.cycle(sub, now)
				if sub.deleted { // its lifetime expired: ss.subs lost it
					i--
				}
				m.yield()
			}
		}
		for _, sub := range ss.subs {
			if sub.next.Before(next) {
				next = sub.next
			}
		}
	}
	m.clearTouched()
	if len(m.due) > 0 && m.due[0].nextSample.Before(next) {
		next = m.due[0].nextSample
	}
	d := next.Sub(now)
	if d < 0 {
		d = 0
	}
	m.timer.Reset(d)
}

// subscription is one subscription; owned by the run loop.
type subscription struct {
	id                            uint32
	ss                            *sessSubs
	interval                      time.Duration
	keepAlive, lifetime, maxNotif uint32
	priority                      uint8
	enabled                       bool

	items map[uint32]*monItem
	ready []*monItem // Reporting items with queued notifications
	// triggered: Sampling items that a trigger reported whose queues did
	// not fit in MaxNotificationsPerPublish; the next message sends them.
	triggered []*monItem
	linked    bool // SetTriggering gave an item links: a deleted item is looked for in them
	touched   bool
	deleted   bool

	next         time.Time
	idleAt       time.Time // the last cycle, if it had no data to send; see catchUp
	keepAliveCtr uint32
	lifetimeCtr  uint32
	late         bool
	more         bool // the last message said MoreNotifications: the next continues its cycle
	first        bool // no message sent yet: the first cycle sends a keep-alive
	seq          uint32
	retrans      []ua.NotificationMessage // sent, not acknowledged, oldest first
	retransSize  []int                    // retainedBytes of each in retrans
	spare        []ua.NotificationMessage // acknowledged data change messages, for reuse
}

// nextSeq returns the sequence number of the next message.
func (sub *subscription) nextSeq() uint32 {
	if sub.seq == math.MaxUint32 {
		return 1
	}
	return sub.seq + 1
}

// appendAvailable appends the sequence numbers in the retransmission queue.
func (sub *subscription) appendAvailable(b []uint32) []uint32 {
	for i := range sub.retrans {
		b = append(b, sub.retrans[i].SequenceNumber)
	}
	return b
}

func (sub *subscription) available() []uint32 {
	out := make([]uint32, len(sub.retrans))
	for i := range sub.retrans {
		out[i] = sub.retrans[i].SequenceNumber
	}
	return out
}

// hasNotifications reports whether the subscription has a data change to
// send.
func (sub *subscription) hasNotifications() bool {
	for _, it := range sub.ready {
		if !it.deleted && it.mode == ua.MonitoringModeReporting && it.pending() {
			return true
		}
	}
	for _, it := range sub.triggered {
		if !it.deleted && it.mode == ua.MonitoringModeSampling && len(it.queue) > 0 {
			return true
		}
	}
	return false
}

// cycle runs one publishing cycle of sub at now (OPC 10000-4 §5.13.1.1,
// simplified state table): send a NotificationMessage if there are
// notifications and a Publish request, else count keep-alive and lifetime.
func (m *Manager) cycle(sub *subscription, now time.Time) {
	sub.next = now.Add(sub.interval)
	sub.idleAt = time.Time{}
	ss := sub.ss
	live := m.hasRequest(ss, now)
	if sub.enabled && sub.hasNotifications() {
		if live {
			m.publishTo(sub, now)
			return
		}
		sub.late = true
	} else {
		sub.idleAt = now // see catchUp
		sub.keepAliveCtr++
		if sub.first || sub.keepAliveCtr >= sub.keepAlive {
			if live {
				m.keepAliveTo(sub, now)
				return
			}
			sub.late = true
		}
	}
	if !live {
		sub.lifetimeCtr++
		if sub.lifetimeCtr >= sub.lifetime {
			if !ss.orphan {
				ss.pending = append(ss.pending, statusMsg{sub.id, sub.nextSeq(), status.BadTimeout})
			}
			m.deleteSub(sub)
		}
	}
}

// publishTo answers the session's oldest Publish request with sub's
// notifications.
func (m *Manager) publishTo(sub *subscription, now time.Time) {
	pr := m.dequeue(sub.ss)
	msg := sub.newMessage()
	dcn := msg.NotificationData[0].Body.(*encodedDCN)
	dcn.start()
	max := int(sub.maxNotif)
	// The items triggered before that did not fit go first.
	triggered := append(m.triggered[:0], sub.triggered...)
	for _, it := range sub.triggered {
		it.inTriggered = false
	}
	clear(sub.triggered)
	sub.triggered = sub.triggered[:0]
	evl, triggered, more := m.drainReady(sub, dcn, max, triggered)
	if evl != nil {
		// The events beside the data changes, or alone.
		if dcn.n == 0 {
			msg.NotificationData = []ua.ExtensionObject{{Body: evl}}
		} else {
			msg.NotificationData = []ua.ExtensionObject{msg.NotificationData[0], {Body: evl}}
		}
	}
	if m.drainTriggered(sub, dcn, max, triggered) {
		more = true
	}
	dcn.finish()
	clear(triggered)
	m.triggered = triggered[:0]
	sub.seq = sub.nextSeq()
	msg.SequenceNumber = sub.seq
	msg.PublishTime = m.clock()
	if !sub.more {
		// A message that begins a cycle: the next cycle is at least an
		// interval after it, also when it went out later than its cycle
		// ran (it waited for a Publish request, or for the run loop's
		// work on other subscriptions), so that messages stay an interval
		// apart.
		if n := msg.PublishTime.Add(sub.interval); n.After(sub.next) {
			sub.next = n
		}
	}
	m.retain(sub, msg)
	sub.keepAliveCtr, sub.lifetimeCtr, sub.first = 0, 0, false
	sub.late, sub.more = more, more
	m.avail = sub.appendAvailable(m.avail[:0])
	m.resp = ua.PublishResponse{
		SubscriptionID:           sub.id,
		AvailableSequenceNumbers: m.avail,
		MoreNotifications:        more,
		NotificationMessage:      msg,
	}
	m.send(pr, &m.resp, now)
	m.resp = ua.PublishResponse{}
}

// drainReady drains sub's ready items into dcn and an event list (nil
// when no event item had any), at most max notifications in all (0: no
// bound); the items left with notifications stay ready (more). It appends
// the items the drained ones trigger to triggered.
func (m *Manager) drainReady(sub *subscription, dcn *encodedDCN, max int, triggered []*monItem) (*ua.EventNotificationList, []*monItem, bool) {
	var evl *ua.EventNotificationList
	ready := sub.ready[:0]
	more := false
	m.touchReady(sub.ready)
	for _, it := range sub.ready {
		if it.deleted || it.mode != ua.MonitoringModeReporting {
			// Set to Sampling since it queued: its queue waits for a
			// trigger or for SetMonitoringMode(Reporting), which puts it
			// back.
			it.inReady = false
			continue
		}
		sent := dcn.n
		if evl != nil {
			sent += len(evl.Events)
		}
		if max > 0 && sent >= max {
			ready = append(ready, it)
			more = true
			continue
		}
		if it.ev != nil {
			if evl == nil {
				evl = &ua.EventNotificationList{}
			}
			room := -1
			if max > 0 {
				room = max - sent
			}
			m.drainEvents(evl, it, room)
		} else {
			m.drain(dcn, it, max-(sent-dcn.n))
		}
		if it.pending() {
			ready = append(ready, it)
			more = true
		} else {
			it.inReady = false
		}
		triggered = append(triggered, it.links...)
	}
	clear(sub.ready[len(ready):])
	sub.ready = ready
	return evl, triggered, more
}

// drainTriggered drains the sampling data items of triggered into dcn,
// within max (MaxNotificationsPerPublish); those with more left are kept
// for the next message, and it reports whether there are any.
func (m *Manager) drainTriggered(sub *subscription, dcn *encodedDCN, max int, triggered []*monItem) bool {
	more := false
	for _, it := range triggered {
		if it.deleted || it.mode != ua.MonitoringModeSampling || len(it.queue) == 0 || it.ev != nil {
			continue
		}
		if m.drain(dcn, it, max) > 0 && !it.inTriggered {
			it.inTriggered = true
			sub.triggered = append(sub.triggered, it)
			more = true
		}
	}
	return more
}

// retain keeps msg for Republish, within MaxRetransmissionQueue and
// MaxRetransmissionBytes: the oldest go first.
func (m *Manager) retain(sub *subscription, msg ua.NotificationMessage) {
	if len(sub.retrans) >= m.lim.MaxRetransmissionQueue {
		m.dropRetrans(sub, 0)
	}
	n := m.retainedBytes(msg)
	sub.retrans = append(sub.retrans, msg)
	sub.retransSize = append(sub.retransSize, n)
	m.retransBytes += n
	for m.retransBytes > m.lim.MaxRetransmissionBytes && len(sub.retrans) > 1 {
		m.dropRetrans(sub, 0)
	}
}

// drain moves the notifications of it's queue into dcn, as many as fit
// within max (0: no cap), oldest first, and returns how many are left.
func (m *Manager) drain(dcn *encodedDCN, it *monItem, max int) (left int) {
	n := len(it.queue)
	if max > 0 && dcn.n+n > max {
		n = max - dcn.n
	}
	if n <= 0 {
		return len(it.queue)
	}
	dcn.add(it.queue[:n])
	m.releaseQueued(it.queue[:n])
	if n == len(it.queue) {
		it.queue = it.queue[:0] // overwritten by the next samples
	} else {
		it.queue = slices.Delete(it.queue, 0, n)
	}
	return len(it.queue)
}

// keepAliveTo answers the session's oldest Publish request with a
// keep-alive of sub: no notifications, the next sequence number.
func (m *Manager) keepAliveTo(sub *subscription, now time.Time) {
	pr := m.dequeue(sub.ss)
	sub.keepAliveCtr, sub.lifetimeCtr, sub.first, sub.late, sub.more = 0, 0, false, false, false
	m.avail = sub.appendAvailable(m.avail[:0])
	m.resp = ua.PublishResponse{
		SubscriptionID:           sub.id,
		AvailableSequenceNumbers: m.avail,
		NotificationMessage:      ua.NotificationMessage{SequenceNumber: sub.nextSeq(), PublishTime: m.clock()},
	}
	m.send(pr, &m.resp, now)
	m.resp = ua.PublishResponse{}
}

// closable is a channel that can tell it is closed (*uasc.Channel is).
type closable interface{ Closed() bool }

// stale reports whether pr can no longer answer for ss: its channel is
// closed, or the session is bound to another channel now.
func (ss *sessSubs) stale(pr *pubReq) bool {
	if c, ok := pr.ch.(closable); ok && c.Closed() {
		return true
	}
	return pr.ch.ID() != ss.sess.ChannelID()
}

// hasRequest drops the stale Publish requests at the head of the session's
// queue and reports whether a live one is left to answer. Requests of an
// old channel all precede those of the session's new one, and a closed
// channel's are all stale, so looking at the head is enough. A stale
// request whose channel is still open gets Bad_SecureChannelIdInvalid.
func (m *Manager) hasRequest(ss *sessSubs, now time.Time) bool {
	for len(ss.queue) > 0 && ss.stale(&ss.queue[0]) {
		m.dropStale(m.dequeue(ss), now)
	}
	return len(ss.queue) > 0
}

// dropStale drops a stale Publish request, answering it with
// Bad_SecureChannelIdInvalid if its channel is still open.
func (m *Manager) dropStale(pr pubReq, now time.Time) {
	if c, ok := pr.ch.(closable); !ok || !c.Closed() {
		m.fail(pr, status.BadSecureChannelIDInvalid, now)
	}
}

// sessionMoved drops the Publish requests that s queued over another
// channel than the one it is bound to now (ActivateSession over a new
// channel); its new channel's requests then get the notifications.
func (m *Manager) sessionMoved(s Session, now time.Time) {
	ss := m.sessions[s]
	if ss == nil {
		return
	}
	keep := ss.queue[:0]
	for _, pr := range ss.queue {
		if ss.stale(&pr) {
			m.dropStale(pr, now)
		} else {
			keep = append(keep, pr)
		}
	}
	clear(ss.queue[len(keep):])
	ss.queue = keep
}

func (m *Manager) dequeue(ss *sessSubs) pubReq {
	pr := ss.queue[0]
	ss.queue[0] = pubReq{}
	ss.queue = ss.queue[1:]
	return pr
}

// send writes resp as the answer to pr.
func (m *Manager) send(pr pubReq, resp *ua.PublishResponse, now time.Time) {
	resp.ResponseHeader = ua.ResponseHeader{Timestamp: m.clock(), RequestHandle: pr.handle, ServiceResult: status.Good}
	resp.Results = pr.results
	m.out = ua.AppendMessage(m.out[:0], resp)
	// Posted, not written: a client that does not read must not stall the
	// manager. A dead channel is the connection's business; the
	// notifications stay in the retransmission queue for Republish.
	pr.ch.PostResponse(pr.reqID, m.out)
}

// fail answers pr with a ServiceFault of status.
func (m *Manager) fail(pr pubReq, status ua.StatusCode, now time.Time) {
	f := &ua.ServiceFault{ResponseHeader: ua.ResponseHeader{Timestamp: m.clock(), RequestHandle: pr.handle, ServiceResult: status}}
	m.out = ua.AppendMessage(m.out[:0], f)
	pr.ch.PostResponse(pr.reqID, m.out)
}

// serveLate answers Publish requests with the session's pending status
// changes, then the late subscriptions (highest priority first); without
// subscriptions, the queued requests get Bad_NoSubscription.
func (m *Manager) serveLate(ss *sessSubs, now time.Time) {
	for len(ss.pending) > 0 && m.hasRequest(ss, now) {
		st := ss.pending[0]
		ss.pending = ss.pending[1:]
		pr := m.dequeue(ss)
		m.send(pr, &ua.PublishResponse{
			SubscriptionID: st.subID,
			NotificationMessage: ua.NotificationMessage{
				SequenceNumber:   st.seq,
				PublishTime:      m.clock(),
				NotificationData: []ua.ExtensionObject{{Body: &ua.StatusChangeNotification{Status: st.status}}},
			},
		}, now)
	}
	for m.hasRequest(ss, now) {
		var best *subscription
		for _, sub := range ss.subs {
			if sub.late && (best == nil || sub.priority > best.priority) {
				best = sub
			}
		}
		if best == nil {
			break
		}
		if best.enabled && best.hasNotifications() {
			m.publishTo(best, now)
		} else {
			m.keepAliveTo(best, now)
		}
	}
	if len(ss.subs) == 0 {
		for len(ss.queue) > 0 {
			m.fail(m.dequeue(ss), status.BadNoSubscription, now)
		}
	}
}

// dropRetrans drops message i of sub's retransmission queue.
func (m *Manager) dropRetrans(sub *subscription, i int) {
	old := sub.retrans[i]
	m.retransBytes -= sub.retransSize[i]
	sub.retrans = slices.Delete(sub.retrans, i, i+1)
	sub.retransSize = slices.Delete(sub.retransSize, i, i+1)
	sub.recycle(old)
}

// retainedBytes returns the encoded notifications msg holds (event
// lists encoded into a buffer the manager reuses).
func (m *Manager) retainedBytes(msg ua.NotificationMessage) int {
	n := 0
	for _, eo := range msg.NotificationData {
		switch e := eo.Body.(type) {
		case *encodedDCN:
			n += len(e.b)
		case *ua.EventNotificationList:
			m.sizeBuf = e.Encode(m.sizeBuf[:0])
			n += len(m.sizeBuf)
		}
	}
	if cap(m.sizeBuf) > maxSizeBuf {
		m.sizeBuf = nil
	}
	return n
}

// maxSizeBuf is the largest buffer retainedBytes keeps.
const maxSizeBuf = 64 << 10

// deleteSub removes sub and its items.
func (m *Manager) deleteSub(sub *subscription) {
	if sub.deleted {
		return
	}
	m.current.Add(^uint32(0)) // minus one
	sub.deleted = true        // its items' triggering links go with it
	for _, it := range sub.items {
		m.removeItem(it)
	}
	for _, n := range sub.retransSize {
		m.retransBytes -= n
	}
	sub.retrans, sub.retransSize = nil, nil
	delete(m.subs, sub.id)
	// The pool of samples keeps no more than the items left can use.
	if keep := max(1024, 2*m.itemCount); len(m.free) > keep {
		clear(m.free[keep:])
		m.free = slices.Clip(m.free[:keep])
	}
	ss := sub.ss
	if i := slices.Index(ss.subs, sub); i >= 0 {
		// A new slice, not slices.Delete: tick and cycle may be ranging
		// over ss.subs (a subscription whose lifetime ends), and Delete
		// would shift it and clear its tail under them.
		ss.subs = slices.Concat(ss.subs[:i:i], ss.subs[i+1:])
	}
	m.dropOrphan(ss)
}

// reclaim makes room in the server-wide limits for a session whose client
// is here: it deletes the subscriptions of the session, other than
// except, whose client is gone (the session closed, or detached from its
// channel) and that holds the most items, and reports whether there was
// one. Such subscriptions would otherwise hold their places for the
// session's timeout or their lifetime, up to hours.
func (m *Manager) reclaim(except *sessSubs) bool {
	var best *sessSubs
	most := -1
	for s, ss := range m.sessions {
		if ss == except || len(ss.subs) == 0 || !ss.orphan && !s.Detached() {
			continue
		}
		if n := ss.itemCount(); n > most {
			best, most = ss, n
		}
	}
	if best == nil {
		return false
	}
	for _, sub := range slices.Clone(best.subs) {
		m.deleteSub(sub)
	}
	return true
}

// dropOrphan forgets ss once its session closed and its last subscription
// is gone.
func (m *Manager) dropOrphan(ss *sessSubs) {
	if ss.orphan && len(ss.subs) == 0 {
		delete(m.sessions, ss.sess)
	}
}

// sessionClosed handles the end of ss's session at now (OPC 10000-4
// §5.7.2.1, §5.7.4): its queued Publish requests get Bad_SessionClosed,
// its pending status changes have nobody to go to. With del (CloseSession
// with DeleteSubscriptions) its subscriptions are deleted; else (also when
// the session timed out) they live on: with no Publish request they count
// their lifetime and expire after lifetime × publishing interval, unless a
// session of the same user takes them over with TransferSubscriptions.
func (m *Manager) sessionClosed(ss *sessSubs, del bool, now time.Time) {
	if !ss.orphan {
		ss.orphan = true
		for len(ss.queue) > 0 {
			pr := m.dequeue(ss)
			if c, ok := pr.ch.(closable); !ok || !c.Closed() {
				m.fail(pr, status.BadSessionClosed, now)
			}
		}
		ss.pending = nil
	}
	if del {
		for _, sub := range slices.Clone(ss.subs) {
			m.deleteSub(sub)
		}
	}
	m.dropOrphan(ss)
}

// acknowledge processes the acknowledgements of a Publish request.
func (m *Manager) acknowledge(ss *sessSubs, acks []ua.SubscriptionAcknowledgement) []ua.StatusCode {
	if len(acks) == 0 {
		return nil
	}
	res := make([]ua.StatusCode, len(acks))
	for i, a := range acks {
		sub := m.subs[a.SubscriptionID]
		if sub == nil || sub.ss != ss {
			res[i] = status.BadSubscriptionIDInvalid
			continue
		}
		j := slices.IndexFunc(sub.retrans, func(n ua.NotificationMessage) bool { return n.SequenceNumber == a.SequenceNumber })
		if j < 0 {
			res[i] = status.BadSequenceNumberUnknown
			continue
		}
		m.dropRetrans(sub, j)
	}
	return res
}

// revisePublishing revises a requested publishing interval (ms) to a
// multiple of the base cycle, at least one cycle, at most MaxPublishingInterval.
func (m *Manager) revisePublishing(ms float64) time.Duration {
	lim := &m.lim
	base := lim.MinPublishingInterval
	if math.IsNaN(ms) || ms <= 0 {
		return base
	}
	// Compare before converting: beyond what a Duration holds the
	// conversion is implementation-defined (math.MinInt64 on amd64).
	if ms >= durMS(lim.MaxPublishingInterval) {
		return lim.MaxPublishingInterval / base * base
	}
	return roundUp(time.Duration(ms*float64(time.Millisecond)), base)
}

// roundUp returns d rounded up to a multiple of unit, at least unit.
func roundUp(d, unit time.Duration) time.Duration {
	if d <= unit {
		return unit
	}
	return (d + unit - 1) / unit * unit
}

// reviseCounts revises keep-alive and lifetime counts: keep-alive 0 is
// the default 10; the lifetime is at least 3 keep-alives; both are bounded
// by MaxKeepAliveCount and MaxLifetimeCount.
func (m *Manager) reviseCounts(keepAlive, lifetime uint32) (uint32, uint32) {
	lim := &m.lim
	if keepAlive == 0 {
		keepAlive = 10
	}
	keepAlive = min(keepAlive, lim.MaxKeepAliveCount)
	lifetime = max(lifetime, 3*keepAlive)
	lifetime = min(lifetime, lim.MaxLifetimeCount)
	if lifetime < 3*keepAlive {
		keepAlive = max(lifetime/3, 1)
	}
	return keepAlive, lifetime
}

func (m *Manager) reviseMaxNotif(n uint32) uint32 {
	lim := m.lim.MaxNotificationsPerPublish
	if n == 0 || n > lim {
		return lim
	}
	return n
}

func durMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
