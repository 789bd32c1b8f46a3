package config

import (
	"math"
	"strings"
)

// AlarmKind is what a tag's alarm watches.
type AlarmKind string

// Alarm kinds.
const (
	// AlarmLimit is one level at a time (HighHigh, High, Low, LowLow):
	// OPC UA's ExclusiveLimitAlarmType.
	AlarmLimit AlarmKind = "limit"
	// AlarmLimits is each limit on its own: NonExclusiveLimitAlarmType.
	AlarmLimits AlarmKind = "limits"
	// AlarmOffNormal is a Boolean or an enumeration away from its normal
	// value: OffNormalAlarmType.
	AlarmOffNormal AlarmKind = "off_normal"
)

// TagAlarm is a tag's alarm, evaluated on every sample of the tag.
type TagAlarm struct {
	Kind AlarmKind `json:"kind"`
	// The limits of a limit alarm (in engineering units when scaled), at
	// least one; LowLow ≤ Low < High ≤ HighHigh among those set.
	HighHigh *float64 `json:"high_high,omitempty"`
	High     *float64 `json:"high,omitempty"`
	Low      *float64 `json:"low,omitempty"`
	LowLow   *float64 `json:"low_low,omitempty"`
	// Deadband: a limit is left once the value is this far back inside.
	Deadband float64 `json:"deadband,omitempty"`
	// Normal is an off-normal alarm's normal value (0 or 1 for a bool).
	Normal *float64 `json:"normal,omitempty"`
	// Severity, 1..1000 (OPC UA: 1 lowest, 1000 highest).
	Severity int `json:"severity"`
	// Message is the alarm's text; empty: edged says which limit.
	Message string `json:"message,omitempty"`
}

// CommAlarm is a device's communication alarm: active while the device
// does not answer (its tags Bad_NoCommunication).
type CommAlarm struct {
	Severity int    `json:"severity"`
	Message  string `json:"message,omitempty"`
}

// MaxAlarmMessage bounds an alarm's message.
const MaxAlarmMessage = 512

func (v *validator) severity(p string, s int, msg string) {
	v.intRange(p+".severity", s, 1, 1000, " (OPC UA's severity: 1 lowest, 1000 highest)")
	if len(msg) > MaxAlarmMessage || strings.ContainsAny(msg, "\x00") {
		v.add(p+".message", "longer than %d bytes or with a NUL", MaxAlarmMessage)
	}
}

// tagAlarm checks a tag's alarm.
func (v *validator) tagAlarm(tp string, t *Tag) {
	a := t.Alarm
	if a == nil {
		return
	}
	p := tp + ".alarm"
	v.severity(p, a.Severity, a.Message)
	limits := []struct {
		name string
		x    *float64
	}{{"low_low", a.LowLow}, {"low", a.Low}, {"high", a.High}, {"high_high", a.HighHigh}}
	switch a.Kind {
	case AlarmLimit, AlarmLimits:
		if !numeric(t.Type) {
			v.add(p+".kind", "%s is for numbers, not a %s", a.Kind, t.Type)
		}
		var last *float64
		lastName, set := "", 0
		for _, l := range limits {
			if l.x == nil {
				continue
			}
			set++
			if math.IsNaN(*l.x) || math.IsInf(*l.x, 0) || math.Abs(*l.x) > MaxScale {
				v.add(p+"."+l.name, "%g is not a finite number within ±%g", *l.x, MaxScale)
				continue
			}
			if last != nil && (*l.x < *last || *l.x == *last && (lastName == "low" && l.name == "high")) {
				v.add(p+"."+l.name, "%g is below %s (%g): want low_low ≤ low < high ≤ high_high", *l.x, lastName, *last)
			}
			last, lastName = l.x, l.name
		}
		if set == 0 {
			v.add(p, "a %s alarm needs a limit: high_high, high, low or low_low", a.Kind)
		}
		if a.Deadband < 0 || math.IsNaN(a.Deadband) || math.IsInf(a.Deadband, 0) {
			v.add(p+".deadband", "%g is not a finite number ≥ 0", a.Deadband)
		}
		if a.Normal != nil {
			v.add(p+".normal", "only for kind off_normal")
		}
	case AlarmOffNormal:
		if t.Type != Bool && !integer(t.Type) || t.Scaling != nil {
			v.add(p+".kind", "off_normal is for bools and unscaled integers (enumerations), not a %s", t.Type)
		}
		switch {
		case a.Normal == nil:
			v.add(p+".normal", "missing: the normal value (0 or 1 for a bool)")
		case t.Type == Bool && *a.Normal != 0 && *a.Normal != 1:
			v.add(p+".normal", "%g: a bool's normal value is 0 or 1", *a.Normal)
		case *a.Normal != math.Trunc(*a.Normal):
			v.add(p+".normal", "%g is not an integer", *a.Normal)
		}
		for _, l := range limits {
			if l.x != nil {
				v.add(p+"."+l.name, "only for kinds limit and limits")
			}
		}
		if a.Deadband != 0 {
			v.add(p+".deadband", "only for kinds limit and limits")
		}
	case "":
		v.add(p+".kind", "missing (limit, limits or off_normal)")
	default:
		v.add(p+".kind", "%q is not limit, limits or off_normal", a.Kind)
	}
}

// integer reports whether t is an integer type.
func integer(t Type) bool {
	switch t {
	case Int16, UInt16, Int32, UInt32, Int64, UInt64:
		return true
	}
	return false
}
