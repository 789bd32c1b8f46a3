// Package plctest provides a fake plc.Device for tests: values, errors,
// delays and hangs under the test's control, and a record of what the
// engine asked of it. It works with testing/synctest: its delays are
// timers, so they pass in fake time.
package plctest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
)

var _ plc.Device = (*Fake)(nil)

// Fake is a controllable plc.Device. The zero value is ready; all methods
// are safe for concurrent use.
//
// A Poll answers each due tag with the value set by Set (the zero Value
// of the tag's type if none, BadNotFound for a handle never bound or set) and Good, unless SetTagStatus gave the tag
// an error; it waits SetDelay first (honouring its context), fails as a
// whole with SetError's error, and blocks while Hang is in effect even if
// its context ends, as a stuck driver would. A Write stores the value, so
// the next Poll reads it back, unless SetWriteError set an error.
type Fake struct {
	mu sync.Mutex
	// By handle; grown to the largest handle seen.
	tags      []plc.Tag
	values    []plc.Value
	tagStatus []plc.Status
	reads     []int
	err       error
	writeErr  error
	delay     time.Duration
	hang      chan struct{}
	polls     int
	inPoll    bool
	overlap   bool
	written   []Written
	pollLog   []PollRecord
	logPolls  bool
	stats     plc.DeviceStats
	bindErr   error
}

// Written is a write the fake received.
type Written struct {
	Handle plc.Handle
	Value  plc.Value
	Time   time.Time
}

// PollRecord is one poll: when it started and the tags it read.
type PollRecord struct {
	Start time.Time
	Due   []plc.Handle
}

// grow makes room for handle h.
func (f *Fake) grow(h plc.Handle) {
	for int(h) >= len(f.tags) {
		f.tags = append(f.tags, plc.Tag{})
		f.values = append(f.values, plc.Value{})
		f.tagStatus = append(f.tagStatus, status.Good)
		f.reads = append(f.reads, 0)
	}
}

// zero is the zero Value of type t.
func zero(t plc.Type) plc.Value {
	if t == plc.String {
		return plc.StringValue("")
	}
	v, _ := plc.Int64Value(0).Convert(t)
	return v
}

// Bind records the tags; it fails with the error of FailBind if set.
func (f *Fake) Bind(tags []plc.BoundTag) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bindErr != nil {
		return f.bindErr
	}
	for _, t := range tags {
		f.grow(t.Handle)
		f.tags[t.Handle] = t.Tag
		if f.values[t.Handle].Type() == plc.Invalid {
			f.values[t.Handle] = zero(t.Tag.Type)
		}
	}
	return nil
}

// FailBind makes Bind fail with err.
func (f *Fake) FailBind(err error) { f.mu.Lock(); f.bindErr = err; f.mu.Unlock() }

// Poll implements plc.Device.
func (f *Fake) Poll(ctx context.Context, due []plc.Handle, out []plc.Sample) error {
	f.mu.Lock()
	if f.inPoll {
		f.overlap = true
	}
	f.inPoll = true
	f.polls++
	f.stats.Requests++
	if f.logPolls {
		f.pollLog = append(f.pollLog, PollRecord{Start: time.Now(), Due: append([]plc.Handle(nil), due...)})
	}
	delay, hang := f.delay, f.hang
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inPoll = false; f.mu.Unlock() }()

	if hang != nil {
		<-hang
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			f.mu.Lock()
			f.stats.Errors++
			f.stats.Timeouts++
			f.stats.LastError = ctx.Err().Error()
			f.mu.Unlock()
			return fmt.Errorf("plctest: poll: %w", status.BadTimeout)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		f.stats.Errors++
		f.stats.LastError = f.err.Error()
		return f.err
	}
	for i, h := range due {
		if int(h) >= len(f.tags) {
			out[i] = plc.Sample{Status: status.BadNotFound}
			continue
		}
		f.reads[h]++
		if st := f.tagStatus[h]; st != status.Good {
			out[i] = plc.Sample{Status: st}
			continue
		}
		out[i] = plc.Sample{Value: f.values[h]}
	}
	return nil
}

// Write implements plc.Device.
func (f *Fake) Write(ctx context.Context, h plc.Handle, v plc.Value) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.grow(h)
	f.stats.Requests++
	if f.writeErr != nil {
		f.stats.Errors++
		return f.writeErr
	}
	f.values[h] = v
	f.written = append(f.written, Written{Handle: h, Value: v, Time: time.Now()})
	return nil
}

// Stats implements plc.Device.
func (f *Fake) Stats() plc.DeviceStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Set sets the value the next polls return for h.
func (f *Fake) Set(h plc.Handle, v plc.Value) {
	f.mu.Lock()
	f.grow(h)
	f.values[h] = v
	f.mu.Unlock()
}

// SetAll sets the value of every bound tag at once: a poll sees all the
// old values or all the new ones.
func (f *Fake) SetAll(v plc.Value) {
	f.mu.Lock()
	for h, t := range f.tags {
		if t.Name != "" {
			f.values[h] = v
		}
	}
	f.mu.Unlock()
}

// SetTagStatus makes polls answer h with st and no value (Good clears it).
func (f *Fake) SetTagStatus(h plc.Handle, st plc.Status) {
	f.mu.Lock()
	f.grow(h)
	f.tagStatus[h] = st
	f.mu.Unlock()
}

// SetError makes polls fail as a whole with err (nil: answer again).
func (f *Fake) SetError(err error) { f.mu.Lock(); f.err = err; f.mu.Unlock() }

// SetWriteError makes writes fail with err (nil: succeed again).
func (f *Fake) SetWriteError(err error) { f.mu.Lock(); f.writeErr = err; f.mu.Unlock() }

// SetDelay makes each poll take d before answering.
func (f *Fake) SetDelay(d time.Duration) { f.mu.Lock(); f.delay = d; f.mu.Unlock() }

// Hang makes polls that start from now on block, ignoring their context,
// until Release.
func (f *Fake) Hang() {
	f.mu.Lock()
	if f.hang == nil {
		f.hang = make(chan struct{})
	}
	f.mu.Unlock()
}

// Release ends Hang and unblocks the polls blocked in it.
func (f *Fake) Release() {
	f.mu.Lock()
	if f.hang != nil {
		close(f.hang)
		f.hang = nil
	}
	f.mu.Unlock()
}

// Polls returns the number of polls started.
func (f *Fake) Polls() int { f.mu.Lock(); defer f.mu.Unlock(); return f.polls }

// Reads returns how many answered polls read h.
func (f *Fake) Reads(h plc.Handle) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if int(h) >= len(f.reads) {
		return 0
	}
	return f.reads[h]
}

// LogPolls turns the record of polls (PollLog) on or off; it is off at
// first, so that polls allocate nothing.
func (f *Fake) LogPolls(on bool) { f.mu.Lock(); f.logPolls = on; f.mu.Unlock() }

// PollLog returns a copy of the record of polls.
func (f *Fake) PollLog() []PollRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]PollRecord(nil), f.pollLog...)
}

// ResetLog forgets the poll record (long benchmarks call it).
func (f *Fake) ResetLog() { f.mu.Lock(); f.pollLog = f.pollLog[:0]; f.mu.Unlock() }

// Written returns a copy of the writes received.
func (f *Fake) Written() []Written {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Written(nil), f.written...)
}

// Overlapped reports whether two polls ever ran at once (the engine
// promises they never do).
func (f *Fake) Overlapped() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.overlap }
