package alarms

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"sync"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// Kind is what a condition watches.
type Kind uint8

// Kinds of conditions.
const (
	// ExclusiveLimit: one level at a time (HighHigh, High, Low, LowLow).
	ExclusiveLimit Kind = iota + 1
	// NonExclusiveLimit: each limit on its own (HighHigh and High both).
	NonExclusiveLimit
	// OffNormal: active while the value is not the normal one.
	OffNormal
	// Communication: active while a device does not answer.
	Communication
	// System: a condition of the gateway itself, active while its input
	// (Watch.SetSystem) is not 0.
	System
)

// Config is a condition's configuration.
type Config struct {
	Kind     Kind
	Name     string // the condition's name, e.g. "High"
	Source   string // what it watches: a tag, a device
	Severity uint16 // 1..1000
	Message  string
	Limits   Limits  // limit alarms
	Normal   float64 // OffNormal: the normal value
}

// Shelving is a condition's shelving state.
type Shelving uint8

// Shelving states.
const (
	NotShelved Shelving = iota
	OneShotShelved
	TimedShelved
)

// Change says what an event of a condition reports; several at once.
type Change uint16

// Changes.
const (
	Activated Change = 1 << iota
	Deactivated
	LevelChanged
	QualityChanged
	Acknowledged
	Confirmed
	Commented
	Enabled
	Disabled
	Shelved
	Unshelved
)

// State is a condition's state, as its last event reported it.
type State struct {
	Enabled      bool
	Active       bool
	Level        Level // ExclusiveLimit: the level
	Bits         uint8 // NonExclusiveLimit: the limits exceeded
	Acked        bool
	Confirmed    bool
	Retain       bool
	Shelving     Shelving
	ShelvedUntil int64  // TimedShelved: Unix ns
	Quality      uint32 // the input's status code
	Severity     uint16
	LastSeverity uint16
	Value        float64 // the input when the condition last changed
	Time         int64   // Unix ns of the last event
	ActiveTime   int64   // Unix ns of the last activation or level change
	Comment      string
	User         string // who made the last change (empty: the gateway)
	EventID      [16]byte
}

// Condition is one condition: its configuration and state.
type Condition struct {
	ID     int
	Config Config
	State  State
}

// hotCond is what evaluating a sample reads and writes of a condition:
// its inputs' configuration and a copy of the state that the samples
// decide, apart from the Condition so that a sample that changes nothing
// touches one cache line.
type hotCond struct {
	limits Limits
	// quietLo, quietHi: between them (both excluded) a limit alarm in no
	// limit's state stays in none (±Inf for unset limits).
	quietLo, quietHi float64
	normal           float64
	quality          uint32
	kind             Kind
	level            Level
	bits             uint8
	active           bool
}

// MaxShelvingTime bounds a timed shelving.
const MaxShelvingTime = 24 * time.Hour

// Set is the gateway's conditions. Samples come in batches between Begin
// and End; the operators' actions come from any goroutine. Every change
// of a condition is reported, under the set's lock, to the emit function
// given to New, which copies what it keeps.
type Set struct {
	mu    sync.Mutex
	conds []Condition
	hot   []hotCond // by condition, as conds
	timed int       // conditions in TimedShelved
	emit  func(c *Condition, ch Change)
	boot  uint32 // tells this run's event ids from an earlier run's
	seq   uint64
}

// New returns the set of conditions of configs, all enabled and
// inactive.
func New(configs []Config, emit func(c *Condition, ch Change)) *Set {
	var b [4]byte
	rand.Read(b[:])
	s := &Set{emit: emit, boot: binary.BigEndian.Uint32(b[:]), conds: make([]Condition, len(configs)), hot: make([]hotCond, len(configs))}
	for i, c := range configs {
		s.conds[i] = Condition{ID: i, Config: c,
			State: State{Enabled: true, Acked: true, Confirmed: true, Severity: c.Severity, LastSeverity: c.Severity}}
		lo, hi := c.Limits.quiet()
		s.hot[i] = hotCond{limits: c.Limits, quietLo: lo, quietHi: hi, normal: c.Normal, kind: c.Kind}
	}
	return s
}

// Len is the number of conditions.
func (s *Set) Len() int { return len(s.conds) }

// Begin starts a batch of samples: it takes the set's lock until End.
func (s *Set) Begin() { s.mu.Lock() }

// End ends a batch of samples.
func (s *Set) End() { s.mu.Unlock() }

// Sample evaluates condition id on the input x with status quality (a
// StatusCode; a bad one keeps the condition's state and reports the
// quality) at t (Unix ns). For a Communication condition x is 1 while the
// device answers, 0 while it does not. Call it between Begin and End.
func (s *Set) Sample(id int, x float64, quality uint32, t int64) {
	h := &s.hot[id]
	var ch Change
	if quality != h.quality {
		h.quality = quality
		ch |= QualityChanged
	}
	if status.Code(quality).IsBad() && h.kind != Communication {
		if ch != 0 {
			c := &s.conds[id]
			c.State.Quality = quality
			s.event(c, ch, t, "")
		}
		return
	}
	active, level, bits := false, h.level, h.bits
	switch h.kind {
	case ExclusiveLimit:
		if h.level != None || x <= h.quietLo || x >= h.quietHi {
			level = h.limits.level(x, h.level)
		}
		if level != h.level && level != None && h.level != None {
			ch |= LevelChanged
		}
		active = level != None
	case NonExclusiveLimit:
		if h.bits != 0 || x <= h.quietLo || x >= h.quietHi {
			bits = h.limits.bits(x, h.bits)
		}
		if bits != h.bits && bits != 0 && h.bits != 0 {
			ch |= LevelChanged
		}
		active = bits != 0
	case OffNormal, System:
		active = x != h.normal && !(math.IsNaN(x) && math.IsNaN(h.normal))
	case Communication:
		active = x == 0
	}
	switch {
	case active && !h.active:
		ch |= Activated
	case !active && h.active:
		ch |= Deactivated
	}
	// A level that changes without one of the changes above does not
	// happen: from or to None (no bits) is an activation or a
	// deactivation.
	if ch == 0 {
		return
	}
	h.level, h.bits, h.active = level, bits, active
	c := &s.conds[id]
	st := &c.State
	st.Quality, st.Level, st.Bits = quality, level, bits
	if ch&(Activated|Deactivated|LevelChanged) != 0 {
		st.Value = x
	}
	if ch&(Activated|LevelChanged) != 0 {
		st.Active, st.Acked, st.Confirmed, st.ActiveTime = true, false, false, t
		st.LastSeverity, st.Severity = st.Severity, c.Config.Severity
	}
	if ch&Deactivated != 0 {
		st.Active = false
		if st.Shelving == OneShotShelved {
			s.shelve(c, NotShelved, 0)
			ch |= Unshelved
		}
	}
	s.event(c, ch, t, "")
}

// event updates what every event of c carries and reports ch.
func (s *Set) event(c *Condition, ch Change, t int64, user string) {
	st := &c.State
	st.Retain = st.Enabled && (st.Active || !st.Acked || !st.Confirmed)
	st.Time, st.User = t, user
	s.seq++
	binary.BigEndian.PutUint32(st.EventID[0:], s.boot)
	binary.BigEndian.PutUint32(st.EventID[4:], uint32(c.ID))
	binary.BigEndian.PutUint64(st.EventID[8:], s.seq)
	if st.Enabled || ch&Disabled != 0 {
		s.emit(c, ch)
	}
}

// action runs an operator's action on condition id under the lock.
func (s *Set) action(id int, f func(c *Condition) (Change, status.Code), user, comment string, now time.Time) status.Code {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < 0 || id >= len(s.conds) {
		return status.BadNodeIDUnknown
	}
	c := &s.conds[id]
	ch, code := f(c)
	if code != status.Good {
		return code
	}
	if comment != "" {
		c.State.Comment = comment
		ch |= Commented
	}
	s.event(c, ch, now.UnixNano(), user)
	return status.Good
}

func (s *Set) checkEvent(c *Condition, eventID []byte) status.Code {
	if string(eventID) != string(c.State.EventID[:]) {
		return status.BadEventIDUnknown
	}
	if !c.State.Enabled {
		return status.BadConditionDisabled
	}
	return status.Good
}

// Acknowledge acknowledges condition id's event eventID (its last).
func (s *Set) Acknowledge(id int, eventID []byte, comment, user string, now time.Time) status.Code {
	return s.action(id, func(c *Condition) (Change, status.Code) {
		if code := s.checkEvent(c, eventID); code != status.Good {
			return 0, code
		}
		if c.State.Acked {
			return 0, status.BadConditionBranchAlreadyAcked
		}
		c.State.Acked = true
		return Acknowledged, status.Good
	}, user, comment, now)
}

// Confirm confirms condition id's event eventID, once acknowledged.
func (s *Set) Confirm(id int, eventID []byte, comment, user string, now time.Time) status.Code {
	return s.action(id, func(c *Condition) (Change, status.Code) {
		if code := s.checkEvent(c, eventID); code != status.Good {
			return 0, code
		}
		switch {
		case c.State.Confirmed:
			return 0, status.BadConditionBranchAlreadyConfirmed
		case !c.State.Acked:
			return 0, status.BadInvalidState
		}
		c.State.Confirmed = true
		return Confirmed, status.Good
	}, user, comment, now)
}

// AddComment comments condition id's event eventID.
func (s *Set) AddComment(id int, eventID []byte, comment, user string, now time.Time) status.Code {
	return s.action(id, func(c *Condition) (Change, status.Code) {
		return 0, s.checkEvent(c, eventID)
	}, user, comment, now)
}

// Enable enables condition id: its state is reported again.
func (s *Set) Enable(id int, user string, now time.Time) status.Code {
	return s.action(id, func(c *Condition) (Change, status.Code) {
		if c.State.Enabled {
			return 0, status.BadConditionAlreadyEnabled
		}
		c.State.Enabled = true
		return Enabled, status.Good
	}, user, "", now)
}

// Disable disables condition id: it reports nothing until enabled,
// though it still follows its input.
func (s *Set) Disable(id int, user string, now time.Time) status.Code {
	return s.action(id, func(c *Condition) (Change, status.Code) {
		if !c.State.Enabled {
			return 0, status.BadConditionAlreadyDisabled
		}
		c.State.Enabled = false
		return Disabled, status.Good
	}, user, "", now)
}

// TimedShelve shelves condition id for d.
func (s *Set) TimedShelve(id int, d time.Duration, user string, now time.Time) status.Code {
	return s.action(id, func(c *Condition) (Change, status.Code) {
		if d <= 0 || d > MaxShelvingTime {
			return 0, status.BadShelvingTimeOutOfRange
		}
		if !c.State.Enabled {
			return 0, status.BadConditionDisabled
		}
		s.shelve(c, TimedShelved, now.Add(d).UnixNano())
		return Shelved, status.Good
	}, user, "", now)
}

// OneShotShelve shelves condition id until it is next inactive.
func (s *Set) OneShotShelve(id int, user string, now time.Time) status.Code {
	return s.action(id, func(c *Condition) (Change, status.Code) {
		switch {
		case c.State.Shelving == OneShotShelved:
			return 0, status.BadConditionAlreadyShelved
		case !c.State.Enabled:
			return 0, status.BadConditionDisabled
		}
		s.shelve(c, OneShotShelved, 0)
		return Shelved, status.Good
	}, user, "", now)
}

// Unshelve unshelves condition id.
func (s *Set) Unshelve(id int, user string, now time.Time) status.Code {
	return s.action(id, func(c *Condition) (Change, status.Code) {
		if c.State.Shelving == NotShelved {
			return 0, status.BadConditionNotShelved
		}
		s.shelve(c, NotShelved, 0)
		return Unshelved, status.Good
	}, user, "", now)
}

// shelve sets c's shelving state, counting the timed shelvings.
func (s *Set) shelve(c *Condition, sh Shelving, until int64) {
	if c.State.Shelving == TimedShelved {
		s.timed--
	}
	if sh == TimedShelved {
		s.timed++
	}
	c.State.Shelving, c.State.ShelvedUntil = sh, until
}

// Tick ends the timed shelvings that expired by now; with none, it
// looks at no condition.
func (s *Set) Tick(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timed == 0 {
		return
	}
	t := now.UnixNano()
	for i := range s.conds {
		c := &s.conds[i]
		if c.State.Shelving == TimedShelved && t >= c.State.ShelvedUntil {
			s.shelve(c, NotShelved, 0)
			s.event(c, Unshelved, t, "")
		}
	}
}

// Retained calls f with each enabled condition whose state is retained
// (active, or not yet acknowledged or confirmed): what a ConditionRefresh
// reports. f runs under the set's lock.
func (s *Set) Retained(f func(c *Condition)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.conds {
		if c := &s.conds[i]; c.State.Enabled && c.State.Retain {
			f(c)
		}
	}
}

// Get copies condition id's state into st.
func (s *Set) Get(id int, st *State) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < 0 || id >= len(s.conds) {
		return false
	}
	*st = s.conds[id].State
	return true
}
