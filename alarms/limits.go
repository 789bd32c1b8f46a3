// Package alarms evaluates the gateway's alarms and keeps their state:
// limit alarms on numbers, off-normal alarms on Booleans and enumerations,
// a communication alarm per device, each a condition with the states
// OPC 10000-9 gives one (enabled, active, acknowledged, confirmed,
// shelved, retained, commented). A Set is told the samples and the
// operators' actions and says what changed, evaluating a sample without
// allocating; a Watch feeds it the scan engine's images and passes the
// changes on. It knows nothing of OPC UA's address space. See
// docs/events.md.
package alarms

import "math"

// Level is the state of an exclusive limit alarm: which limit the value
// is beyond.
type Level uint8

// Levels, from low to high.
const (
	None Level = iota
	LowLow
	Low
	High
	HighHigh
)

var levelNames = [...]string{"Normal", "LowLow", "Low", "High", "HighHigh"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return "Level?"
}

// Limits are a limit alarm's limits; NaN for one not set. A value leaves
// a limit only once it is Deadband back inside it.
type Limits struct {
	HighHigh, High, Low, LowLow float64
	Deadband                    float64
}

// NoLimit is an unset limit.
var NoLimit = math.NaN()

// level returns the exclusive level of x, from cur (an unset limit is
// NaN, which no comparison meets).
func (l *Limits) level(x float64, cur Level) Level {
	switch {
	case x >= l.HighHigh, cur == HighHigh && x > l.HighHigh-l.Deadband:
		return HighHigh
	case x >= l.High, cur >= High && x > l.High-l.Deadband:
		return High
	case x <= l.LowLow, cur == LowLow && x < l.LowLow+l.Deadband:
		return LowLow
	case x <= l.Low, (cur == Low || cur == LowLow) && x < l.Low+l.Deadband:
		return Low
	}
	return None
}

// Bits of the non-exclusive limit states: each limit on its own.
const (
	BitLowLow uint8 = 1 << iota
	BitLow
	BitHigh
	BitHighHigh
)

// bits returns the non-exclusive states of x, from cur.
func (l *Limits) bits(x float64, cur uint8) uint8 {
	var b uint8
	if x >= l.HighHigh || cur&BitHighHigh != 0 && x > l.HighHigh-l.Deadband {
		b |= BitHighHigh
	}
	if x >= l.High || cur&BitHigh != 0 && x > l.High-l.Deadband {
		b |= BitHigh
	}
	if x <= l.Low || cur&BitLow != 0 && x < l.Low+l.Deadband {
		b |= BitLow
	}
	if x <= l.LowLow || cur&BitLowLow != 0 && x < l.LowLow+l.Deadband {
		b |= BitLowLow
	}
	return b
}

// quiet returns the bounds between which (both excluded) a value beyond
// no limit stays beyond none: the lowest of the high limits and the
// highest of the low ones, ±Inf where none is set. NaN is beyond neither.
func (l *Limits) quiet() (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	for _, x := range [...]float64{l.Low, l.LowLow} {
		if x == x && x > lo { // set
			lo = x
		}
	}
	for _, x := range [...]float64{l.High, l.HighHigh} {
		if x == x && x < hi {
			hi = x
		}
	}
	return lo, hi
}
