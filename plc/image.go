package plc

import "time"

// entry is one tag in an image: 24 bytes without pointers, so the
// garbage collector need not scan an image's entries. The text of a String
// tag is in tagState.strs.
type entry struct {
	bits   uint64
	ts     int64 // source timestamp, Unix nanoseconds; 0 for none
	status Status
	typ    Type
}

// tagState is the value, status and timestamp of every tag.
type tagState struct {
	entries []entry
	strs    []string // the texts of the String tags, by slot
	slot    []int32  // shared and immutable: a String tag's slot in strs, else -1
}

func (s *tagState) value(h Handle) Value {
	e := &s.entries[h]
	v := Value{bits: e.bits, typ: e.typ}
	if e.typ == String {
		v.str = s.strs[s.slot[h]]
	}
	return v
}

func (s *tagState) text(h Handle) string {
	if sl := s.slot[h]; sl >= 0 {
		return s.strs[sl]
	}
	return ""
}

// Image is one published process image: per tag its value, status and
// source timestamp, as one cycle left them. An Image never changes once
// published, so any number of goroutines may read it, and hold it, without
// locks; reading it never allocates. Get the newest with Engine.Image.
type Image struct {
	cycle   uint64
	time    int64
	state   tagState
	changed []Handle
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
func (im *Image) Len() int { return len(im.state.entries) }

// Sample returns tag h's value, status and source timestamp (zero if the
// tag has none): exactly what an OPC UA Read of its Value returns. h must
// be below Len.
func (im *Image) Sample(h Handle) Sample {
	e := &im.state.entries[h]
	s := Sample{Value: im.state.value(h), Status: e.status}
	if e.ts != 0 {
		s.Time = time.Unix(0, e.ts)
	}
	return s
}

// Value returns tag h's value.
func (im *Image) Value(h Handle) Value { return im.state.value(h) }

// Status returns tag h's status.
func (im *Image) Status(h Handle) Status { return im.state.entries[h].status }

// SourceTime returns tag h's source timestamp in Unix nanoseconds, 0 if
// the tag has none; cheaper than Sample for comparisons.
func (im *Image) SourceTime(h Handle) int64 { return im.state.entries[h].ts }

// Changed returns the tags whose value, status or source timestamp differ
// from the previous image's, in no particular order, each once: what a
// subscription sampler needs to look at, so that its work per cycle is
// proportional to what changed. A tag read again gets a new source
// timestamp, so it is listed even if its value stayed. The slice is the
// image's: do not modify it.
func (im *Image) Changed() []Handle { return im.changed }
