package alarms

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
)

// Event is a change of a condition as a Watch passes it on: a copy of the
// condition's state at the change.
type Event struct {
	Cond   int
	Change Change
	Config *Config // the condition's, not changed
	State  State
}

// Watch evaluates the alarms of a configuration on the scan engine's
// images, in the scan's goroutine as each image is published (the
// samples of the tags that changed; a few nanoseconds each), and passes
// the changes through a bounded queue to a goroutine of its own, so that
// the scan never waits for who reads them. When the queue is full the
// changes are dropped and counted.
type Watch struct {
	Set   *Set
	eng   *plc.Engine
	confs []Config
	byTag []tagConds // by handle
	// system: the SystemConditions by name; every: checks run each second
	// (OnTick), which set them.
	system map[string]int
	every  []func(time.Time)

	qmu     sync.Mutex
	queue   []Event // a ring, grown by doubling up to qmax
	qmax    int
	head, n int
	wake    chan struct{}
	dropped atomic.Uint64

	stopSub func()
	images  chan *plc.Image // held images, evaluated in order by evalLoop
	quit    chan struct{}
	done    chan struct{}
	evDone  chan struct{}
}

// imageQueue bounds the images waiting for their evaluation: the scan
// waits for room when the evaluation falls this far behind (no sample
// is skipped), and the engine allocates an image for each held beyond
// its own few.
const imageQueue = 4

// tagConds are the conditions a tag's samples go to: its alarm's, and its
// device's communication condition; -1 none.
type tagConds struct{ alarm, comm int32 }

// Conditions returns the conditions conf configures, in order: for each
// device its communication condition, then its tags' alarms, then the
// SystemConditions; and the engine handle each of those before the
// SystemConditions watches.
func Conditions(eng *plc.Engine, conf *config.Config) ([]Config, []plc.Handle, error) {
	var cs []Config
	var hs []plc.Handle
	for di := range conf.Devices {
		d := &conf.Devices[di]
		if a := d.CommAlarm; a != nil && len(d.Tags) > 0 {
			h, ok := eng.Lookup(d.Name, d.Tags[0].Name)
			if !ok {
				return nil, nil, fmt.Errorf("alarms: the engine has no tag %s.%s", d.Name, d.Tags[0].Name)
			}
			msg := a.Message
			if msg == "" {
				msg = d.Name + " does not answer"
			}
			cs = append(cs, Config{Kind: Communication, Name: "Communication", Source: d.Name, Severity: uint16(a.Severity), Message: msg})
			hs = append(hs, h)
		}
		for ti := range d.Tags {
			t := &d.Tags[ti]
			a := t.Alarm
			if a == nil {
				continue
			}
			h, ok := eng.Lookup(d.Name, t.Name)
			if !ok {
				return nil, nil, fmt.Errorf("alarms: the engine has no tag %s.%s", d.Name, t.Name)
			}
			c := Config{Source: d.Name + "." + t.Name, Severity: uint16(a.Severity), Message: a.Message}
			switch a.Kind {
			case config.AlarmLimit, config.AlarmLimits:
				c.Kind, c.Name = ExclusiveLimit, "Limit"
				if a.Kind == config.AlarmLimits {
					c.Kind = NonExclusiveLimit
				}
				c.Limits = Limits{HighHigh: limit(a.HighHigh), High: limit(a.High), Low: limit(a.Low), LowLow: limit(a.LowLow), Deadband: a.Deadband}
			case config.AlarmOffNormal:
				c.Kind, c.Name, c.Normal = OffNormal, "OffNormal", *a.Normal
			}
			if c.Message == "" {
				c.Message = c.Source + " " + map[Kind]string{ExclusiveLimit: "beyond a limit", NonExclusiveLimit: "beyond a limit", OffNormal: "off normal"}[c.Kind]
			}
			cs = append(cs, c)
			hs = append(hs, h)
		}
	}
	return append(cs, SystemConditions...), hs, nil
}

// SystemSource is the Source of the gateway's own conditions.
const SystemSource = "Server"

// SystemConditions are the gateway's own conditions, which every
// configuration has after its own (Conditions); their inputs are set by
// whoever watches what they are about (Watch.SetSystem).
var SystemConditions = []Config{
	{Kind: System, Name: "CertificateExpiration", Source: SystemSource, Severity: 500,
		Message: "The server's application certificate expires within 30 days"},
	{Kind: System, Name: "HistoryStore", Source: SystemSource, Severity: 700,
		Message: "The history store is full or failing: values are not kept"},
	{Kind: System, Name: "ScanOverrun", Source: SystemSource, Severity: 600,
		Message: "The scan overruns its cycle beyond the allowed rate"},
	{Kind: System, Name: "RealTime", Source: SystemSource, Severity: 400,
		Message: "The real-time scheduling or the watchdog asked for was refused"},
}

func limit(x *float64) float64 {
	if x == nil {
		return math.NaN()
	}
	return *x
}

// NewWatch makes the watch of conf's alarms on eng, with a queue of
// queueLen changes. It watches nothing before Start.
func NewWatch(eng *plc.Engine, conf *config.Config, queueLen int) (*Watch, error) {
	cs, hs, err := Conditions(eng, conf)
	if err != nil {
		return nil, err
	}
	qmax := max(queueLen, 1)
	w := &Watch{eng: eng, confs: cs, queue: make([]Event, min(qmax, queueStart)), qmax: qmax, wake: make(chan struct{}, 1),
		images: make(chan *plc.Image, imageQueue), quit: make(chan struct{}), done: make(chan struct{}), evDone: make(chan struct{})}
	w.Set = New(cs, w.push)
	// By handle, up to the last one with a condition: the tags after it
	// have none (10,000 tags and the simulator's alarms take a few
	// entries, not 80 KB).
	n := 0
	for _, h := range hs {
		n = max(n, int(h)+1)
	}
	w.byTag = make([]tagConds, n)
	for i := range w.byTag {
		w.byTag[i] = tagConds{-1, -1}
	}
	w.system = map[string]int{}
	for i := len(hs); i < len(cs); i++ {
		w.system[cs[i].Name] = i
	}
	for i, h := range hs {
		if cs[i].Kind == Communication {
			w.byTag[h].comm = int32(i)
		} else {
			w.byTag[h].alarm = int32(i)
		}
	}
	return w, nil
}

// SetSystem sets the input of the system condition named name: active
// or not, at now. An unknown name is ignored.
func (w *Watch) SetSystem(name string, active bool, now time.Time) {
	i, ok := w.system[name]
	if !ok {
		return
	}
	x := 0.0
	if active {
		x = 1
	}
	w.Set.Begin()
	w.Set.Sample(i, x, 0, now.UnixNano())
	w.Set.End()
}

// OnTick has f run each second on the watch's goroutine, from Start to
// Stop: checks that set the system conditions. Call it before Start.
func (w *Watch) OnTick(f func(now time.Time)) { w.every = append(w.every, f) }

// Start evaluates every image from now on and calls deliver with each
// change, in order, on a goroutine of its own.
func (w *Watch) Start(deliver func(*Event)) { w.StartBatch(deliver, nil) }

// StartBatch is Start, and calls flush (when not nil) after each batch of
// changes delivered: the changes queued when the goroutine woke, at most
// the queue's length. A deliver that keeps what it is given until flush
// hands a batch on at once.
func (w *Watch) StartBatch(deliver func(*Event), flush func()) {
	go w.evalLoop()
	w.stopSub = w.eng.Subscribe(w.handOver)
	go w.run(deliver, flush)
}

// handOver runs on the scan's goroutine for each image: it holds the
// image for evalLoop, so that the evaluation is not part of the cycle
// (on a gateway it runs on another core while the scan goes on).
func (w *Watch) handOver(im *plc.Image) {
	im.Hold()
	select {
	case w.images <- im:
	case <-w.quit:
		im.Release()
	}
}

// evalLoop evaluates the images handed over, in order, and releases
// them.
func (w *Watch) evalLoop() {
	defer close(w.evDone)
	for {
		select {
		case im := <-w.images:
			w.evaluate(im)
			im.Release()
		case <-w.quit:
			for {
				select {
				case im := <-w.images:
					im.Release()
				default:
					return
				}
			}
		}
	}
}

// Stop stops watching and delivering (nothing if it was not started).
func (w *Watch) Stop() {
	if w.stopSub == nil {
		return
	}
	w.stopSub()
	close(w.quit)
	<-w.done
	<-w.evDone
}

// Configs are the conditions' configurations, in the order of Set.
func (w *Watch) Configs() []Config { return w.confs }

// Dropped is the number of changes dropped from a full queue.
func (w *Watch) Dropped() uint64 { return w.dropped.Load() }

// evaluate evaluates the samples of an image's changed tags.
func (w *Watch) evaluate(im *plc.Image) {
	now := im.Time().UnixNano()
	w.Set.Begin()
	for _, h := range im.Changed() {
		if int(h) >= len(w.byTag) {
			continue
		}
		tc := w.byTag[h]
		if c := tc.alarm; c >= 0 {
			st := im.Status(h)
			t := im.SourceTime(h)
			if t == 0 {
				t = now
			}
			w.Set.Sample(int(c), im.Value(h).Float64(), uint32(st), t)
		}
		if c := tc.comm; c >= 0 {
			x := 1.0
			if im.Status(h) == status.BadNoCommunication {
				x = 0
			}
			w.Set.Sample(int(c), x, 0, now)
		}
	}
	w.Set.End()
}

// push queues a change (under the set's lock).
func (w *Watch) push(c *Condition, ch Change) {
	w.qmu.Lock()
	if w.n == len(w.queue) && !w.grow() {
		w.qmu.Unlock()
		w.dropped.Add(1)
		return
	}
	e := &w.queue[(w.head+w.n)%len(w.queue)]
	e.Cond, e.Change, e.Config, e.State = c.ID, ch, &w.confs[c.ID], c.State
	w.n++
	w.qmu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// queueStart is the length the queue of changes starts with: a storm
// grows it (a few times, up to its bound), a quiet plant never does.
const queueStart = 64

// grow doubles the full queue, up to qmax, and reports whether it did;
// with w.qmu held.
func (w *Watch) grow() bool {
	if len(w.queue) >= w.qmax {
		return false
	}
	q := make([]Event, min(2*len(w.queue), w.qmax))
	k := copy(q, w.queue[w.head:])
	copy(q[k:], w.queue[:w.head])
	w.queue, w.head = q, 0
	return true
}

// deliverBatch is how many changes run delivers before it flushes and
// yields.
const deliverBatch = 64

// run delivers the queued changes, and ends timed shelvings every second.
func (w *Watch) run(deliver func(*Event), flush func()) {
	defer close(w.done)
	tick := time.NewTicker(time.Second) // timed shelvings end on time
	defer tick.Stop()
	var e Event
	pending := 0 // delivered since the last flush
	for {
		select {
		case <-w.quit:
			return
		case <-w.wake:
		case now := <-tick.C:
			w.Set.Tick(now)
			for _, f := range w.every {
				f(now)
			}
		}
		for {
			w.qmu.Lock()
			if w.n == 0 {
				w.qmu.Unlock()
				break
			}
			e = w.queue[w.head]
			w.queue[w.head] = Event{}
			w.head = (w.head + 1) % len(w.queue)
			w.n--
			w.qmu.Unlock()
			deliver(&e)
			// A storm keeps this goroutine busy: each deliverBatch changes
			// go on, and the scan (and the server) run, as the historian
			// lets them.
			if pending++; pending == deliverBatch {
				if flush != nil {
					flush()
				}
				pending = 0
				runtime.Gosched()
			}
		}
		if pending > 0 && flush != nil {
			flush()
		}
		pending = 0
	}
}
