package plc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// layout is the tags and their names as goroutines other than Run's see
// them (Tag, Lookup, Write): replaced whole, never changed.
type layout struct {
	tags  []Tag
	names *tagNames // Engine.names
}

// resultSlack is room in the results channel beyond one per device, for
// devices a Reconfigure adds.
const resultSlack = 64

// tagKey is the key of tag name of device in maps by name.
func tagKey(device, name string) string { return device + "\x00" + name }

// newDevice returns Run's state for dc, without tags.
func newDevice(dc DeviceConfig) *device {
	d := &device{name: dc.Name, dev: dc.Device, jobs: make(chan *job, 1), exited: make(chan struct{})}
	if in, ok := dc.Device.(Inline); ok && in.Inline() {
		d.inline = true
	}
	return d
}

// bindDevice builds d's scan classes from its handles' tags and binds its
// driver to them.
func (e *Engine) bindDevice(d *device, tags []Tag) error {
	d.classes = d.classes[:0]
	for _, h := range d.handles {
		every := uint64(tags[h].Scan / e.period)
		ci := slices.IndexFunc(d.classes, func(c class) bool { return c.every == every })
		if ci < 0 {
			d.classes = append(d.classes, class{every: every, next: 1})
			ci = len(d.classes) - 1
		}
		d.classes[ci].handles = append(d.classes[ci].handles, h)
	}
	slices.SortFunc(d.classes, func(a, b class) int { return cmp.Compare(a.every, b.every) })
	bound := make([]BoundTag, len(d.handles))
	for j, h := range d.handles {
		bound[j] = BoundTag{Handle: h, Tag: tags[h]}
	}
	if err := d.dev.Bind(bound); err != nil {
		return fmt.Errorf("plc: device %s: %w", d.name, err)
	}
	n := len(d.handles)
	d.job = &job{d: d, due: make([]Handle, 0, n), out: make([]Sample, n), writes: make([]writeReq, 0, 16)}
	return nil
}

// publishLayout makes the current tags and devices those that other
// goroutines see.
func (e *Engine) publishLayout() {
	e.lay.Store(&layout{tags: e.tags, names: e.names})
	devs := slices.Clone(e.devs)
	e.devList.Store(&devs)
}

// sameTag reports whether a and b are the same tag definition.
func sameTag(a, b *Tag) bool {
	eq := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Device == b.Device && a.Name == b.Name && a.Type == b.Type && a.Access == b.Access &&
		a.Scan == b.Scan && a.Address == b.Address && a.NonFinite == b.NonFinite &&
		eq(a.WriteMin, b.WriteMin) && eq(a.WriteMax, b.WriteMax)
}

// plan is a change prepared by Reconfigure for Run's goroutine.
type plan struct {
	tags   []Tag     // by handle
	tagDev []int32   // by handle
	names  *tagNames // Engine.names with the handles given now
	devs   []*device
	retire []*device
	// keep[h]: tag h keeps its state (same definition, and it existed);
	// else it starts again (Bad_WaitingForInitialData), or, not in use,
	// is Bad_NodeIdUnknown.
	keep []bool
	done chan struct{}
}

// ErrPeriodChange is Reconfigure's error for a change of the base cycle,
// which takes a restart.
var ErrPeriodChange = errors.New("plc: the base cycle cannot change while the engine runs")

// Reconfigure changes the devices and tags of the engine, running or not,
// to those of cfg, between two cycles, and returns once the change is in
// effect and the goroutines of the devices it dropped have returned (a
// poll they are in ends within PollTimeout; Reconfigure waits no longer
// than that); the caller then closes their drivers.
//
// A device of cfg whose Device is one the engine has (the same value)
// keeps its goroutine, connection and state; it must then have the same
// tags as before. Any other device is new: its driver is bound and gets a
// goroutine. A tag keeps its Handle as long as its device and name stay;
// one removed and added again gets its old handle back. A tag whose
// definition (Tag) did not change keeps its value, status and timestamps,
// even on a new Device; a changed or new one starts as
// Bad_WaitingForInitialData; a removed one is Bad_NodeIdUnknown in the
// images from now on, and all of these are in the next image's Changed.
// Writes queued for a removed tag answer Bad_NodeIdUnknown; those a
// dropped device had started are answered with what it says.
//
// Only Devices and Tags of cfg are used (the base cycle and the timeouts
// stay; a different Period is ErrPeriodChange). Nothing changes when it
// returns an error: cfg's problems, a driver's Bind error, or ctx's
// error before Run took the change.
func (e *Engine) Reconfigure(ctx context.Context, cfg Config) error {
	e.reMu.Lock()
	defer e.reMu.Unlock()
	if cfg.Period != 0 && cfg.Period != e.period {
		return ErrPeriodChange
	}
	p := &plan{done: make(chan struct{})}
	oldDevs := *e.devList.Load()
	devIdx, kept, err := p.planDevices(cfg.Devices, oldDevs)
	if err != nil {
		return err
	}
	newHandles, err := e.planTags(p, cfg.Tags, devIdx)
	if err != nil {
		return err
	}
	for i, d := range p.devs {
		if err := e.bindPlanned(p, d, kept[d], newHandles[i]); err != nil {
			return err
		}
	}
	for _, d := range oldDevs {
		if !kept[d] {
			p.retire = append(p.retire, d)
		}
	}
	if err := e.handOver(ctx, p); err != nil {
		return err
	}
	e.awaitRetired(p)
	return nil
}

// planDevices puts cfg's devices into p: a running one whose Device and
// Name are given again is kept (kept), the others are new. devIdx is the
// index of each device by name.
func (p *plan) planDevices(devs []DeviceConfig, running []*device) (devIdx map[string]int, kept map[*device]bool, err error) {
	byDev := make(map[Device]*device, len(running))
	for _, d := range running {
		byDev[d.dev] = d
	}
	devIdx = make(map[string]int, len(devs))
	kept = make(map[*device]bool)
	for i, dc := range devs {
		if err := checkDevice(i, dc, devIdx); err != nil {
			return nil, nil, err
		}
		devIdx[dc.Name] = i
		if d := byDev[dc.Device]; d != nil && d.name == dc.Name && !kept[d] {
			kept[d] = true
			p.devs = append(p.devs, d)
		} else {
			p.devs = append(p.devs, newDevice(dc))
		}
	}
	return devIdx, kept, nil
}

// checkDevice checks device i of a configuration against the names of
// those before it.
func checkDevice(i int, dc DeviceConfig, before map[string]int) error {
	_, dup := before[dc.Name]
	switch {
	case dc.Name == "":
		return fmt.Errorf("plc: device %d: empty Name", i)
	case dup:
		return fmt.Errorf("plc: device %q: Name used twice", dc.Name)
	case dc.Device == nil:
		return fmt.Errorf("plc: device %q: Device is nil", dc.Name)
	}
	return nil
}

// checkTag checks tag i of a configuration with the engine's period.
func (e *Engine) checkTag(i int, t *Tag, devIdx map[string]int) (int, error) {
	di, ok := devIdx[t.Device]
	switch {
	case !ok:
		return 0, fmt.Errorf("plc: tag %s.%s: Device: no device %q", t.Device, t.Name, t.Device)
	case t.Name == "":
		return 0, fmt.Errorf("plc: tag %d of device %s: empty Name", i, t.Device)
	case !t.Type.Valid():
		return 0, fmt.Errorf("plc: tag %s.%s: Type: %v is not a tag type", t.Device, t.Name, t.Type)
	case t.Access > ReadWrite:
		return 0, fmt.Errorf("plc: tag %s.%s: Access: invalid mode %d", t.Device, t.Name, t.Access)
	case t.Scan < 0 || t.Scan%e.period != 0:
		return 0, fmt.Errorf("plc: tag %s.%s: Scan: %v is not a positive multiple of the period %v", t.Device, t.Name, t.Scan, e.period)
	}
	return di, nil
}

// planTags puts cfg's tags into p: a tag of the running layout keeps its
// handle (and its value, when unchanged: p.keep), a new one takes the
// next. It returns the handles of each of p's devices.
func (e *Engine) planTags(p *plan, tags []Tag, devIdx map[string]int) ([][]Handle, error) {
	old := e.lay.Load()
	assigned := make(map[string]Handle, len(tags))
	next := Handle(len(old.tags))
	newHandles := make([][]Handle, len(p.devs))
	for i := range tags {
		t := &tags[i]
		di, err := e.checkTag(i, t, devIdx)
		if err != nil {
			return nil, err
		}
		key := tagKey(t.Device, t.Name)
		if _, dup := assigned[key]; dup {
			return nil, fmt.Errorf("plc: tag %s.%s: Name used twice in the device", t.Device, t.Name)
		}
		h, ok := old.names.handle(old.tags, t.Device, t.Name)
		if !ok {
			h = next
			next++
		}
		assigned[key] = h
		newHandles[di] = append(newHandles[di], h)
	}
	n := int(next)
	p.tags = make([]Tag, n)
	p.tagDev = make([]int32, n)
	p.keep = make([]bool, n)
	for i := range p.tagDev {
		p.tagDev[i] = -1
	}
	for i := range tags {
		t := tags[i]
		if t.Scan == 0 {
			t.Scan = e.period
		}
		h := assigned[tagKey(t.Device, t.Name)]
		p.tags[h] = t
		p.tagDev[h] = int32(devIdx[t.Device])
		p.keep[h] = int(h) < len(old.tags) && old.tags[h].Device != "" && sameTag(&old.tags[h], &t)
	}
	p.names, _ = old.names.next(old.tags, p.tags) // no duplicates: assigned
	return newHandles, nil
}

// bindPlanned binds a new device of p to its handles; a kept device must
// keep its tags as they were.
func (e *Engine) bindPlanned(p *plan, d *device, kept bool, handles []Handle) error {
	if kept {
		same := slices.Equal(d.handles, handles)
		for _, h := range d.handles {
			same = same && p.keep[h]
		}
		if !same {
			return fmt.Errorf("plc: device %s: its Device is kept but its tags changed; give it a new Device", d.name)
		}
		return nil
	}
	d.handles = handles
	return e.bindDevice(d, p.tags)
}

// handOver has p applied: Run's goroutine takes it between two cycles;
// before Run, or after it ended, this goroutine applies it itself.
func (e *Engine) handOver(ctx context.Context, p *plan) error {
	if e.state.Load() == stateNew {
		e.applyPlan(nil, p)
		return nil
	}
	select {
	case e.reconf <- p:
		<-p.done
	case <-e.stopped: // Run has ended: nothing else touches the state
		e.applyPlan(nil, p)
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// awaitRetired waits for the goroutines of p's dropped devices: each ends
// after its poll, within PollTimeout unless its driver ignores the
// deadline; then closing the driver is what ends it.
func (e *Engine) awaitRetired(p *plan) {
	if e.state.Load() == stateNew {
		return
	}
	wait := time.NewTimer(e.pollTimeout + e.period)
	defer wait.Stop()
	for _, d := range p.retire {
		select {
		case <-d.exited:
		case <-wait.C:
			return
		}
	}
}

// applyPlan puts p into effect on Run's goroutine (or, with ctx nil,
// before Run): the tag state grows to the new handles, the tags that
// start again are reset, the new devices start, the dropped ones end,
// and an image of it is published (under the current cycle's number).
func (e *Engine) applyPlan(ctx context.Context, p *plan) {
	defer close(p.done)
	if e.next == nil {
		e.claimNext() // work may grow in place: not the current image's
	}
	n := len(p.tags)
	grow := func(s []uint64) []uint64 { return append(s, make([]uint64, n-len(s))...) }
	e.marked, e.dueMark = grow(e.marked), grow(e.dueMark)
	e.lastOK = append(e.lastOK, make([]int64, n-len(e.lastOK))...)
	entries := append(e.work.entries, make([]entry, n-len(e.work.entries))...)

	// String tags get slots anew; a kept one keeps its text.
	slot := make([]int32, n)
	var strs, lastStr []string
	for h := range p.tags {
		slot[h] = -1
		if p.tags[h].Device == "" || p.tags[h].Type != String {
			continue
		}
		slot[h] = int32(len(strs))
		text, last := "", ""
		if p.keep[h] && h < len(e.work.slot) && e.work.slot[h] >= 0 {
			text, last = e.work.strs[e.work.slot[h]], e.lastStr[e.work.slot[h]]
		}
		strs, lastStr = append(strs, text), append(lastStr, last)
	}
	e.work = tagState{entries: entries, slot: slot, strs: strs}
	e.next = e.workImage() // the one before may share entries: dropped
	e.lastStr = lastStr
	e.tags, e.tagDev, e.names = p.tags, p.tagDev, p.names

	now := time.Now().UnixNano()
	for h := range p.tags {
		if p.keep[h] {
			continue
		}
		st := status.BadWaitingForInitialData
		if p.tags[h].Device == "" {
			st = status.BadNodeIDUnknown
		}
		ne := entry{status: st}
		if e.work.entries[h] != ne {
			e.work.entries[h] = ne
			if e.marked[h] != e.pubSeq+1 {
				e.marked[h] = e.pubSeq + 1
				e.changed = append(e.changed, Handle(h))
			}
		}
		e.lastOK[h] = now
		delete(e.lastGood, Handle(h))
	}

	old := e.devs
	e.devs = p.devs
	for _, d := range e.devs {
		if !slices.Contains(old, d) && ctx != nil {
			e.wg.Add(1)
			go e.worker(ctx, d)
		}
	}
	// Writes waiting for a dropped device: those for a tag that stays
	// wait for its new device; the others fail.
	for _, d := range p.retire {
		d.retired = true
		for _, w := range d.pending {
			e.queueWrite(w)
		}
		clear(d.pending)
		d.pending = d.pending[:0]
		if !d.busy {
			close(d.jobs)
		} else {
			e.retiring = append(e.retiring, d)
		}
	}
	e.publishLayout()
	if ctx != nil {
		// An image of the new tags now, not at the next cycle: readers
		// and subscribers see the change at once.
		e.publish(e.cur.Load().cycle, time.Now().UnixNano())
	}
}

// mergeRetired takes in the last job of a device Reconfigure dropped: the
// writes it performed are answered with what the device said (Good as
// soon as it said so: its tags' next values come from their new device),
// its samples are dropped, and its goroutine ends.
func (e *Engine) mergeRetired(j *job) {
	d := j.d
	for i := range j.writes {
		if w := &j.writes[i]; w.done != nil {
			w.done(w.result)
		}
	}
	clear(j.writes)
	j.writes = j.writes[:0]
	if d.busy {
		d.busy = false
		close(d.jobs)
		e.retiring = slices.DeleteFunc(e.retiring, func(x *device) bool { return x == d })
	}
}
