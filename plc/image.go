package plc

import (
	"sync/atomic"
	"time"
)

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
// source timestamp, as one cycle left them. An Image obtained from
// Engine.Image never changes, so any number of goroutines may read it, and
// hold it, without locks; reading it never allocates.
//
// # Reuse
//
// To publish without allocating, the engine reuses images that no reader
// kept. Each image has a pin word: pinClaimed while the engine writes it,
// pinFree once published, pinKept once a reader took it. The rules:
//
//  1. The engine writes an image only while it is pinClaimed; it stores
//     pinFree after the writes and before the atomic pointer swap that
//     publishes it.
//  2. The engine claims an image (CAS pinFree→pinClaimed) only after it
//     has swapped in its successor, and never claims a pinKept image:
//     pinKept is final.
//  3. A reader (Engine.Image, Image.Retain) may read an image only after
//     it made its pin pinKept (CAS pinFree→pinKept, or found pinKept);
//     finding pinClaimed it reloads the current image, which is then a
//     newer one.
//
// So when a reader's retain succeeds, the image is not being written (the
// pin was not pinClaimed) and will never be written again (pinKept is
// final, rule 2); its contents are complete, since the reader's atomic
// operation on the pin is ordered after the engine's pinFree store, which
// follows the writes (rule 1). The race detector checks this in
// TestConcurrentReaders and TestImageKept. The cost of a kept image is one
// allocation at a later publish.
type Image struct {
	cycle   uint64
	time    int64
	state   tagState
	changed []Handle
	pin     atomic.Int32
}

const (
	pinClaimed int32 = iota
	pinFree
	pinKept
)

// retain makes im's pin pinKept; false if the engine claimed it.
func (im *Image) retain() bool {
	for {
		switch im.pin.Load() {
		case pinKept:
			return true
		case pinClaimed:
			return false
		}
		if im.pin.CompareAndSwap(pinFree, pinKept) {
			return true
		}
	}
}

// Retain marks im kept, so that the engine never reuses it. Images from
// Engine.Image are kept already. A subscriber (Engine.Subscribe) that
// keeps the image it is passed beyond its call must call Retain during
// the call; Retain panics if im is being reused, which happens only when
// it is called later.
func (im *Image) Retain() {
	if !im.retain() {
		panic("plc: Image.Retain of an image being reused; call it during the Subscribe callback")
	}
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
