package ua

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestDateTimeTicks(t *testing.T) {
	tests := []struct {
		t     time.Time
		ticks int64
	}{
		{time.Time{}, 0},
		{time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC), 1},
		{time.Date(1601, 1, 1, 0, 0, 1, 0, time.UTC), 10_000_000},
		{unixEpoch, 116444736000000000},
		{time.Date(9999, 12, 31, 23, 59, 58, 999999900, time.UTC), 2650467743990000000 - 1},
		{time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), math.MaxInt64},
		{MaxDateTime, math.MaxInt64},
		// Far outside what Unix() can express without overflow.
		{time.Unix(math.MaxInt64-1e12, 0), math.MaxInt64},
		{time.Unix(math.MinInt64+1e12, 0), 0},
		{time.Unix(1<<62, 999999999), math.MaxInt64},
		{time.Unix(-1<<62, 0), 0},
		// Unix() wraps to near MaxInt64 seconds for this one.
		{time.Unix(math.MinInt64, 0).Add(-math.MaxInt64), 0},
		// Clamped or not by the nanoseconds alone.
		{time.Date(1601, 1, 1, 0, 0, 0, 99, time.UTC), 0},
		{time.Date(1601, 1, 1, 0, 0, 0, 500_000_000, time.UTC), 5_000_000},
		{time.Date(9999, 12, 31, 23, 59, 59, 1, time.UTC), math.MaxInt64},
		{time.Date(9999, 12, 31, 23, 59, 58, 0, time.UTC), 2650467743990000000 - 10_000_000},
	}
	for _, tt := range tests {
		if got := DateTimeTicks(tt.t); got != tt.ticks {
			t.Errorf("DateTimeTicks(%v) = %d, want %d", tt.t, got, tt.ticks)
		}
	}
	// A time with a monotonic reading is its wall clock.
	now := time.Now()
	if got, want := DateTimeTicks(now), 116444736000000000+now.UnixNano()/100; got != want {
		t.Errorf("DateTimeTicks(%v) = %d, want %d", now, got, want)
	}
	for _, tt := range []struct {
		ticks int64
		t     time.Time
	}{
		{0, time.Time{}},
		{-1, time.Time{}},
		{math.MinInt64, time.Time{}},
		{1, time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC)},
		{2650467743990000000 - 1, time.Date(9999, 12, 31, 23, 59, 58, 999999900, time.UTC)},
		{2650467743990000000, MaxDateTime},
		{math.MaxInt64 - 1, MaxDateTime},
		{math.MaxInt64, MaxDateTime},
	} {
		got := TimeFromTicks(tt.ticks)
		if !got.Equal(tt.t) || got.Location() != time.UTC || got.IsZero() != tt.t.IsZero() {
			t.Errorf("TimeFromTicks(%d) = %v, want %v", tt.ticks, got, tt.t)
		}
	}
	if MaxDateTime.Format(time.RFC3339Nano) != "9999-12-31T23:59:59.9999999Z" {
		t.Errorf("MaxDateTime = %v", MaxDateTime)
	}
}

// TestDateTimeRoundTrip checks that every time between 1601 and 9999,
// at 100 ns resolution, survives encoding unchanged.
func TestDateTimeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		ticks := 1 + r.Int64N(2650467743990000000-1)
		tm := TimeFromTicks(ticks)
		if got := DateTimeTicks(tm); got != ticks {
			t.Fatalf("ticks %d → %v → %d", ticks, tm, got)
		}
		b := AppendDateTime(nil, tm)
		d := NewDecoder(b)
		if got := d.ReadDateTime(); got != tm {
			t.Fatalf("%v decodes as %v", tm, got)
		}
	}
	// A time with a monotonic reading and a location encodes its instant.
	now := time.Now()
	if got := TimeFromTicks(DateTimeTicks(now)); !got.Equal(now.Truncate(0).UTC().Add(-time.Duration(now.Nanosecond() % 100))) {
		t.Errorf("now %v → %v", now, got)
	}
}

func TestTicksFromUnixNano(t *testing.T) {
	for _, tm := range []time.Time{time.Date(2026, 12, 6, 4, 30, 0, 123456789, time.UTC), time.Unix(0, 0), time.Unix(0, 99), time.Unix(-1, 0)} {
		if got, want := TicksFromUnixNano(tm.UnixNano()), DateTimeTicks(tm); got != want {
			t.Errorf("%v: %d, DateTimeTicks %d", tm, got, want)
		}
	}
	var v Variant
	v.SetUint32(7)
	dv := DataValue{Value: v, Status: 0x40000000, SourceTimestamp: time.Unix(1e9, 500), ServerTimestamp: time.Unix(2e9, 0)}
	if got, want := AppendDataValue(nil, &v, dv.Status, DateTimeTicks(dv.SourceTimestamp), DateTimeTicks(dv.ServerTimestamp)), dv.Encode(nil); string(got) != string(want) {
		t.Errorf("AppendDataValue % x, Encode % x", got, want)
	}
}
