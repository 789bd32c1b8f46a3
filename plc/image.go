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
// Engine.Image or Engine.Acquire does not change while it is held, so any
// number of goroutines may read it without locks; reading it never
// allocates.
//
// # Reuse
//
// To publish without allocating, the engine reuses images no reader
// holds. Each image has a pin word: pinClaimed while the engine writes it;
// once published, the number of readers holding it for a while
// (Acquire, until Release), with the bit pinKept once a reader kept it for
// good (Image, Retain). The rules:
//
//  1. The engine writes an image only while it is pinClaimed; it stores 0
//     after the writes and before the atomic pointer swap that publishes
//     it.
//  2. The engine claims an image (CAS 0→pinClaimed) only after it has
//     swapped in its successor: so never one a reader holds or kept
//     (pinKept is final). An image a reader held at that moment is set
//     aside, a few at most, and claimed at a later publish once its
//     readers released it.
//  3. A reader may read an image only after it raised its pin (a CAS from
//     a value that is not pinClaimed); finding pinClaimed it reloads the
//     current image, which is then a newer one.
//
// So when a reader's CAS succeeds, the image is not being written and will
// not be until the reader's Release (rule 2); its contents are complete,
// since the reader's atomic operation on the pin is ordered after the
// engine's store of 0, which follows the writes (rule 1). The race
// detector checks this in TestConcurrentReaders and TestImageKept. The
// cost of a kept image is one allocation at a later publish; a reader
// that acquires and releases within a cycle or two costs none.
type Image struct {
	cycle   uint64
	time    int64
	state   tagState
	changed []Handle
	values  []Handle // the changed tags whose value or status changed
	pin     atomic.Int32
}

const (
	pinClaimed int32 = -1
	pinFree    int32 = 0
	pinKept    int32 = 1 << 30 // or-ed into the count of readers
)

// hold adds a reader to im's pin, and with keep marks it kept; false if
// the engine claimed it.
func (im *Image) hold(keep bool) bool {
	for {
		v := im.pin.Load()
		if v == pinClaimed {
			return false
		}
		n := v + 1
		if keep {
			if v&pinKept != 0 {
				return true
			}
			n = v | pinKept
		}
		if im.pin.CompareAndSwap(v, n) {
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
	if !im.hold(true) {
		panic("plc: Image.Retain of an image being reused; call it during the Subscribe callback")
	}
}

// Hold keeps im from reuse until Release, as Engine.Acquire does: for a
// subscriber (Engine.Subscribe) that reads the image on another
// goroutine. It must be called during the Subscribe callback, and panics
// otherwise when im is being reused. An image held for more than a few
// cycles makes the engine allocate a new one.
func (im *Image) Hold() {
	if !im.hold(false) {
		panic("plc: Image.Hold of an image being reused; call it during the Subscribe callback")
	}
}

// Release ends a hold of Engine.Acquire or Hold: the caller must not read
// im after it. Each Acquire or Hold is released once; a Release without
// one panics.
func (im *Image) Release() {
	for {
		v := im.pin.Load()
		if v == pinClaimed || v&^pinKept == 0 {
			panic("plc: Image.Release without Engine.Acquire")
		}
		if im.pin.CompareAndSwap(v, v-1) {
			return
		}
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
	return Sample{Value: im.state.value(h), Status: e.status, Time: e.ts}
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

// ValueChanged returns the tags of Changed whose value or status differ
// from the previous image's: without those whose source timestamp alone
// is new (a tag read again with the same value), which a subscriber that
// reports value and status changes need not look at. The slice is the
// image's: do not modify it.
func (im *Image) ValueChanged() []Handle { return im.values }
