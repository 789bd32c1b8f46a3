package ua

import (
	"math"
	"time"
)

// A UA DateTime is an Int64 count of 100 ns intervals (ticks) since
// 1601-01-01 00:00:00 UTC (OPC 10000-6 §5.2.2.5). Part 6 clamps both ends:
// a time at or before 1601-01-01 is encoded as 0 and a time at or after
// 9999-12-31 23:59:59 UTC as the largest Int64; a decoder maps 0 (and any
// negative value) to the earliest and MaxInt64 (and anything at or after
// 9999-12-31 23:59:59) to the latest time it can represent.

// MaxDateTime is the time that ReadDateTime returns for the largest UA
// DateTime (MaxInt64) and for any value at or after 9999-12-31 23:59:59
// UTC: 9999-12-31T23:59:59.9999999Z, the latest time a UA DateTime can
// express. AppendDateTime encodes it, like every time from 9999-12-31
// 23:59:59 on, as MaxInt64. The earliest time is the zero time.Time.
var MaxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)

const (
	ticksPerSecond = 10_000_000
	// unixTo1601 is the number of seconds from 1601-01-01 to 1970-01-01.
	unixTo1601 = 11_644_473_600
)

var (
	// dateTimeMin is the UA DateTime 0.
	dateTimeMin = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	// dateTimeLast is the first time that is encoded as MaxInt64.
	dateTimeLast = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	// ticksLast is dateTimeLast in ticks; a decoded value at or beyond it
	// is MaxDateTime.
	ticksLast = (dateTimeLast.Unix() + unixTo1601) * ticksPerSecond
	// unixMin and unixLast are dateTimeMin and dateTimeLast in Unix
	// seconds.
	unixMin, unixLast = dateTimeMin.Unix(), dateTimeLast.Unix()
)

// DateTimeTicks returns t as a UA DateTime: 100 ns ticks since 1601-01-01
// UTC, clamped as Part 6 requires (0 at or before 1601, MaxInt64 from
// 9999-12-31 23:59:59 on). Finer precision than 100 ns is truncated.
func DateTimeTicks(t time.Time) int64 {
	// Every time that needs no clamping: the seconds alone tell. Unix()
	// of a time far outside the range wraps, but never into it.
	if s := t.Unix(); s > unixMin && s < unixLast {
		return (s+unixTo1601)*ticksPerSecond + int64(t.Nanosecond()/100)
	}
	// Compare before converting: Unix() of a time far outside the range
	// could overflow, the comparisons cannot.
	if !t.After(dateTimeMin) {
		return 0
	}
	if !t.Before(dateTimeLast) {
		return math.MaxInt64
	}
	return (t.Unix()+unixTo1601)*ticksPerSecond + int64(t.Nanosecond()/100)
}

// TimeFromTicks returns the time of a UA DateTime: the zero time.Time for
// ticks ≤ 0, MaxDateTime for ticks at or after 9999-12-31 23:59:59, else
// the time in UTC.
func TimeFromTicks(ticks int64) time.Time {
	if ticks <= 0 {
		return time.Time{}
	}
	if ticks >= ticksLast {
		return MaxDateTime
	}
	return time.Unix(ticks/ticksPerSecond-unixTo1601, ticks%ticksPerSecond*100).UTC()
}

// normalizeTicks maps a UA DateTime to the one that encodes
// TimeFromTicks(ticks): ≤ 0 to 0, from 9999-12-31 23:59:59 on to MaxInt64.
func normalizeTicks(ticks int64) int64 {
	if ticks <= 0 {
		return 0
	}
	if ticks >= ticksLast {
		return math.MaxInt64
	}
	return ticks
}

// AppendDateTime appends t as a UA DateTime (see DateTimeTicks). The zero
// time.Time is encoded as 0.
func AppendDateTime(b []byte, t time.Time) []byte { return AppendInt64(b, DateTimeTicks(t)) }

// ReadDateTime reads a UA DateTime (see TimeFromTicks): 0 gives the zero
// time.Time, MaxInt64 gives MaxDateTime, other values a time in UTC.
func (d *Decoder) ReadDateTime() time.Time { return TimeFromTicks(d.ReadInt64()) }
