package plc

import "time"

// entry is one tag in an image. Its layout keeps it at 40 bytes on 64-bit
// and 32 on 32-bit platforms; it holds one pointer (the string).
type entry struct {
	bits   uint64
	ts     int64 // source timestamp, Unix nanoseconds; 0 for none
	str    string
	status Status
	typ    Type
}

func (e *entry) value() Value { return Value{bits: e.bits, str: e.str, typ: e.typ} }

func (e *entry) setValue(v Value) { e.bits, e.str, e.typ = v.bits, v.str, v.typ }

// Image is one published process image: per tag its value, status and
// source timestamp, as one cycle left them. An Image never changes once
// published, so any number of goroutines may read it, and hold it, without
// locks; reading it never allocates. Get the newest with Engine.Image.
type Image struct {
	cycle   uint64
	time    int64
	entries []entry
}

// Cycle is the number of the cycle that published the image: 0 for the
// image before the first cycle, then the cycle's slot number counted from
// 1 at Run's start. Skipped (overrun) cycles leave gaps.
func (im *Image) Cycle() uint64 { return im.cycle }

// Time is the cycle's start time (zero for cycle 0).
func (im *Image) Time() time.Time {
	if im.time == 0 {
		return time.Time{}
	}
	return time.Unix(0, im.time)
}

// Len is the number of tags.
func (im *Image) Len() int { return len(im.entries) }

// Sample returns tag h's value, status and source timestamp (zero if the
// tag was never read): exactly what an OPC UA Read of its Value returns. h
// must be below Len.
func (im *Image) Sample(h Handle) Sample {
	e := &im.entries[h]
	s := Sample{Value: e.value(), Status: e.status}
	if e.ts != 0 {
		s.Time = time.Unix(0, e.ts)
	}
	return s
}

// Value returns tag h's value.
func (im *Image) Value(h Handle) Value { return im.entries[h].value() }

// Status returns tag h's status.
func (im *Image) Status(h Handle) Status { return im.entries[h].status }

// SourceTime returns tag h's source timestamp in Unix nanoseconds, 0 if
// the tag has none; cheaper than Sample for comparisons.
func (im *Image) SourceTime(h Handle) int64 { return im.entries[h].ts }
