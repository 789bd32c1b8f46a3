// Package historian records the historized tags of the scan engine into
// the gateway's time-series store (package tsdb), as the configuration
// says (on change, on a deadband, at a period), and marks the gaps: the
// periods edged did not run and the samples the store could not take.
// It reads the engine's images on a goroutine of its own, so that the
// scan never waits for it, and never allocates per sample.
package historian

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/tsdb"
)

// Historian is the recorder. Its methods are safe to call from any
// goroutine.
type Historian struct {
	db  *tsdb.DB
	eng *plc.Engine
	log *slog.Logger

	lay     atomic.Pointer[layout]
	applyMu sync.Mutex

	images  chan *plc.Image
	missed  atomic.Int64 // images dropped while the historian lagged
	stopSub func()
	quit    chan struct{}
	done    chan struct{}

	recorded atomic.Uint64
	dropped  atomic.Uint64
	through  atomic.Int64 // the time of the last image recorded
}

// layout is what is historized, by engine handle: replaced whole by
// Apply, read by the historian's goroutine and by Series.
type layout struct {
	tags    []*tag // by handle; nil: not historized
	periods []*periodGroup
	agg     config.Aggregates
}

// tag is one historized tag and its recording state (touched by the
// historian's goroutine only).
type tag struct {
	h        plc.Handle
	series   tsdb.SeriesID
	kind     tsdb.Kind
	typ      plc.Type
	mode     config.HistoryMode
	deadband float64 // absolute
	stepped  bool

	have     bool // a sample was recorded
	lastT    int64
	lastBits uint64
	lastText string
	lastSt   plc.Status
	lastRead int64 // periodic: the source time of the reading recorded last
	lost     int64 // time of the first sample the store refused; 0: none
}

// periodGroup is the tags recorded at one period.
type periodGroup struct {
	every int64 // ns
	due   int64 // the next multiple of every to record at
	tags  []*tag
}

// SeriesKey is the key of a tag's series in the store: device.tag.
func SeriesKey(device, name string) string { return device + "." + name }

// kindOf is the store's kind for a tag type.
func kindOf(t plc.Type) tsdb.Kind {
	switch t {
	case plc.Bool:
		return tsdb.Bool
	case plc.Float32:
		return tsdb.Float32
	case plc.Float64:
		return tsdb.Float64
	case plc.String:
		return tsdb.Bytes
	}
	return tsdb.Int
}

// New makes the recorder of eng's tags into db for conf (see Apply). It
// records nothing before Start.
func New(db *tsdb.DB, eng *plc.Engine, conf *config.Config, log *slog.Logger) (*Historian, error) {
	if log == nil {
		log = slog.Default()
	}
	hs := &Historian{db: db, eng: eng, log: log, images: make(chan *plc.Image, 64),
		quit: make(chan struct{}), done: make(chan struct{})}
	hs.lay.Store(&layout{})
	if err := hs.Apply(conf); err != nil {
		return nil, err
	}
	return hs, nil
}

// Apply makes the recorder follow conf: the tags with a history are
// recorded as their settings say, the others no longer; the store's
// bounds and flush interval follow conf.History. A tag whose settings
// did not change keeps its state. It is called after the engine took the
// configuration (its handles).
func (hs *Historian) Apply(conf *config.Config) error {
	hs.applyMu.Lock()
	defer hs.applyMu.Unlock()
	old := hs.lay.Load()
	next := &layout{}
	if h := conf.History; h != nil {
		hs.db.Configure(StoreOptions(h))
		if h.Aggregates != nil {
			next.agg = *h.Aggregates
		}
	}
	groups := map[int64]*periodGroup{}
	n, last := 0, -1
	for di := range conf.Devices {
		d := &conf.Devices[di]
		for ti := range d.Tags {
			if d.Tags[ti].History == nil {
				continue
			}
			h, ok := hs.eng.Lookup(d.Name, d.Tags[ti].Name)
			if !ok {
				return fmt.Errorf("historian: the engine has no tag %s.%s", d.Name, d.Tags[ti].Name)
			}
			n, last = n+1, max(last, int(h))
		}
	}
	// By handle, up to the last historized one.
	next.tags = make([]*tag, last+1)
	slab := make([]tag, 0, n) // one allocation for the tags' states
	for di := range conf.Devices {
		d := &conf.Devices[di]
		for ti := range d.Tags {
			ct := &d.Tags[ti]
			if ct.History == nil {
				continue
			}
			h, _ := hs.eng.Lookup(d.Name, ct.Name) // found above
			if err := hs.newTag(&slab, h, d, ct, old); err != nil {
				return err
			}
			t := &slab[len(slab)-1]
			next.tags[h] = t
			if t.mode == config.Periodic {
				every := int64(ct.History.PeriodMs) * int64(time.Millisecond)
				g := groups[every]
				if g == nil {
					g = &periodGroup{every: every}
					groups[every] = g
					next.periods = append(next.periods, g)
				}
				g.tags = append(g.tags, t)
			}
		}
	}
	hs.lay.Store(next)
	return nil
}

// newTag appends to slab the recording of tag ct (handle h), keeping the
// state of the same series in old.
func (hs *Historian) newTag(slab *[]tag, h plc.Handle, d *config.Device, ct *config.Tag, old *layout) error {
	pt := hs.eng.Tag(h)
	key := SeriesKey(d.Name, ct.Name)
	kind := kindOf(pt.Type)
	id, err := hs.db.Series(key, kind)
	if err != nil {
		return fmt.Errorf("historian: %s: %w", key, err)
	}
	ch := ct.History
	hs.db.SetRetention(id, time.Duration(ch.MaxAgeDays)*24*time.Hour, int64(ch.MaxMB)<<20)
	*slab = append(*slab, tag{h: h, series: id, kind: kind, typ: pt.Type, mode: ch.Mode, stepped: ct.IsStepped()})
	t := &(*slab)[len(*slab)-1]
	if ch.Mode == config.OnDeadband {
		t.deadband = ch.Deadband
		if ch.DeadbandType == config.DeadbandPercent && ct.Scaling != nil {
			t.deadband = ch.Deadband / 100 * (ct.Scaling.EUMax - ct.Scaling.EUMin)
		}
	}
	if int(h) < len(old.tags) {
		if o := old.tags[h]; o != nil && o.series == id {
			t.have, t.lastT, t.lastBits, t.lastText, t.lastSt, t.lastRead, t.lost = o.have, o.lastT, o.lastBits, o.lastText, o.lastSt, o.lastRead, o.lost
		}
	}
	return nil
}

// StoreOptions are the store's options for history settings h.
func StoreOptions(h *config.History) tsdb.Options {
	return tsdb.Options{
		FlushInterval: time.Duration(h.FlushIntervalMs) * time.Millisecond,
		MaxAge:        time.Duration(h.MaxAgeDays) * 24 * time.Hour,
		MaxBytes:      int64(h.MaxMB) << 20,
		Reserve:       int64(h.ReserveMB) << 20,
	}
}

// Start marks the gap since the store last ran in every series that
// was recording then (a sample without a value, Bad_DataLost, at the
// store's last flush), and starts recording each image the engine
// publishes.
func (hs *Historian) Start() {
	hs.markRestart()
	hs.stopSub = hs.eng.Subscribe(func(im *plc.Image) {
		im.Hold()
		select {
		case hs.images <- im:
		default:
			im.Release()
			hs.missed.Add(1)
		}
	})
	go hs.run()
}

// Stop stops recording; what was recorded is in the store, which the
// caller closes.
func (hs *Historian) Stop() {
	if hs.stopSub != nil {
		hs.stopSub()
	}
	close(hs.quit)
	<-hs.done
}

// markRestart appends the restart gap to the series that recorded
// values before it.
func (hs *Historian) markRestart() {
	alive := hs.db.LastAlive()
	if alive == 0 {
		return
	}
	for _, t := range hs.lay.Load().tags {
		if t == nil {
			continue
		}
		var last tsdb.Sample
		found := false
		hs.db.Scan(t.series, math.MinInt64, math.MaxInt64, true, uint32(status.BadDataLost), func(s *tsdb.Sample) bool {
			last, found = *s, true
			return false
		})
		if !found || last.NoValue && last.Status == uint32(status.BadDataLost) {
			continue
		}
		at := max(alive, last.Time+tsdb.Resolution)
		gap := tsdb.Sample{Time: at, Status: uint32(status.BadDataLost), NoValue: true}
		if err := hs.db.Append(t.series, &gap); err != nil && !errors.Is(err, tsdb.ErrOutOfOrder) {
			hs.log.Warn("history: marking the restart", "series", hs.keyOf(t), "err", err)
		}
		t.have, t.lastT, t.lastSt = true, at, status.BadDataLost
	}
}

// keyOf returns t's series key, for messages.
func (hs *Historian) keyOf(t *tag) string {
	pt := hs.eng.Tag(t.h)
	return SeriesKey(pt.Device, pt.Name)
}

// run records the images as they come.
func (hs *Historian) run() {
	defer close(hs.done)
	for {
		select {
		case <-hs.quit:
			for {
				select {
				case im := <-hs.images:
					im.Release()
				default:
					return
				}
			}
		case im := <-hs.images:
			hs.record(im)
			hs.through.Store(im.Time().UnixNano())
			im.Release()
		}
	}
}

// record records what image im brings.
func (hs *Historian) record(im *plc.Image) {
	lay := hs.lay.Load()
	now := im.Time().UnixNano()
	if n := hs.missed.Swap(0); n > 0 {
		hs.markMissed(lay, now, n)
	}
	n := 0
	for _, h := range im.Changed() {
		if int(h) >= len(lay.tags) {
			continue
		}
		t := lay.tags[h]
		if t == nil || t.mode == config.Periodic {
			continue
		}
		s := im.Sample(h)
		if hs.changed(t, &s) {
			hs.append(t, &s, recordTime(t, &s, now))
			n = yieldEvery(n)
		}
	}
	for _, g := range lay.periods {
		if now < g.due {
			continue
		}
		at := now - now%g.every // the period's start, on its multiples
		for _, t := range g.tags {
			s := im.Sample(t.h)
			if s.Status == status.BadWaitingForInitialData || t.have && s.Time == t.lastRead && s.Status == t.lastSt {
				continue // not read again since the last record
			}
			hs.append(t, &s, at)
			n = yieldEvery(n)
		}
		g.due = at + g.every
	}
}

// yieldBatch is how many samples the historian records before it lets
// other goroutines run: the 10,000 samples of tags recorded every second
// come in one image and take milliseconds, which on one P would delay the
// scan's next cycle.
const yieldBatch = 256

// yieldEvery counts a sample recorded and yields the P after each
// yieldBatch.
func yieldEvery(n int) int {
	if n++; n == yieldBatch {
		runtime.Gosched()
		return 0
	}
	return n
}

// recordTime is the time a change of t is recorded at: its source time,
// or when that is not after the last record (a status that changes with
// the value kept, as when a device stops answering), the image's.
func recordTime(t *tag, s *plc.Sample, now int64) int64 {
	if s.Time > t.lastT || !t.have {
		if s.Time != 0 {
			return s.Time
		}
	}
	return now
}

// changed reports whether sample s of t is to be recorded: a change of
// the status, or of the value (beyond the deadband).
func (hs *Historian) changed(t *tag, s *plc.Sample) bool {
	if s.Status == status.BadWaitingForInitialData {
		return false // the restart's gap stands for it
	}
	if !t.have || s.Status != t.lastSt {
		return true
	}
	if s.Status.IsBad() {
		return false
	}
	switch {
	case t.typ == plc.String:
		return s.Value.Text() != t.lastText
	case t.mode == config.OnDeadband:
		return math.Abs(s.Value.Float64()-bitsFloat(t.typ, t.lastBits)) > t.deadband
	}
	return s.Value.Bits() != t.lastBits
}

// append records sample s of t at time at; a sample the store refuses
// leaves a gap, marked when the store takes samples again.
func (hs *Historian) append(t *tag, s *plc.Sample, at int64) {
	if t.lost != 0 {
		gap := tsdb.Sample{Time: t.lost, Status: uint32(status.BadDataLost), NoValue: true}
		if err := hs.db.Append(t.series, &gap); err != nil && !errors.Is(err, tsdb.ErrOutOfOrder) {
			hs.dropped.Add(1)
			return
		}
		t.lost = 0
		at = max(at, gap.Time+tsdb.Resolution)
	}
	ts := tsdb.Sample{Time: at, Status: uint32(s.Status), NoValue: s.Status.IsBad()}
	if !ts.NoValue {
		ts.Value = s.Value.Bits()
		if t.typ == plc.String {
			text := s.Value.Text()
			ts.Bytes = unsafe.Slice(unsafe.StringData(text), len(text)) // read only: the store copies
		}
	}
	switch err := hs.db.Append(t.series, &ts); {
	case err == nil:
		hs.recorded.Add(1)
	case errors.Is(err, tsdb.ErrOutOfOrder):
		return // a clock stepped back: the next sample after the last goes in
	default:
		hs.dropped.Add(1)
		if t.lost == 0 {
			t.lost = at
		}
		return
	}
	t.have, t.lastT, t.lastSt = true, at, s.Status
	if !ts.NoValue {
		t.lastBits = s.Value.Bits()
		if t.typ == plc.String {
			t.lastText = s.Value.Text()
		}
	}
	if t.mode == config.Periodic {
		t.lastRead = s.Time
	}
}

// bitsFloat is the number of a value of type typ with bits (see
// plc.Value).
func bitsFloat(typ plc.Type, bits uint64) float64 {
	switch typ {
	case plc.Float32, plc.Float64:
		return math.Float64frombits(bits)
	case plc.UInt16, plc.UInt32, plc.UInt64:
		return float64(bits)
	}
	return float64(int64(bits))
}

// markMissed marks a gap in the tags recorded on change: n images went
// by while the historian lagged, and changes in them are not recorded.
func (hs *Historian) markMissed(lay *layout, now int64, n int64) {
	hs.log.Warn("history: images skipped, the historian fell behind the scan; their changes are marked lost", "images", n)
	for _, t := range lay.tags {
		if t != nil && t.mode != config.Periodic && t.lost == 0 {
			t.lost = max(now-1, t.lastT+tsdb.Resolution)
		}
	}
}

// Stats are the recorder's figures since New.
type Stats struct {
	Recorded uint64 // samples appended
	Dropped  uint64 // samples the store refused (a full or failing disk)
	Tags     int    // tags historized
}

// Stats returns the recorder's figures.
func (hs *Historian) Stats() Stats {
	n := 0
	for _, t := range hs.lay.Load().tags {
		if t != nil {
			n++
		}
	}
	return Stats{Recorded: hs.recorded.Load(), Dropped: hs.dropped.Load(), Tags: n}
}

// Series returns the series of tag h, its type and whether it is stepped;
// false when h is not historized.
func (hs *Historian) Series(h plc.Handle) (tsdb.SeriesID, plc.Type, bool, bool) {
	lay := hs.lay.Load()
	if int(h) >= len(lay.tags) || lay.tags[h] == nil {
		return 0, 0, false, false
	}
	t := lay.tags[h]
	return t.series, t.typ, t.stepped, true
}

// Through returns the time (Unix ns) of the last image the historian
// recorded: the store holds what the images up to it changed.
func (hs *Historian) Through() int64 { return hs.through.Load() }

// Aggregates returns the default aggregate configuration.
func (hs *Historian) Aggregates() config.Aggregates { return hs.lay.Load().agg }

// DB returns the store.
func (hs *Historian) DB() *tsdb.DB { return hs.db }
