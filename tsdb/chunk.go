package tsdb

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
)

// Kind is what a series' values are.
type Kind uint8

// The kinds of series. Int holds any integer of up to 64 bits (an
// unsigned one as its two's complement bits); Float32 and Float64 hold
// the bits of a float64 (a Float32 series' values are exact float32s and
// are stored as such).
const (
	Bool Kind = 1 + iota
	Int
	Float32
	Float64
	Bytes
)

var kindNames = [...]string{"", "bool", "int", "float32", "float64", "bytes"}

func (k Kind) String() string {
	if k.valid() {
		return kindNames[k]
	}
	return "kind?"
}

func (k Kind) valid() bool { return k >= Bool && k <= Bytes }

// Sample is one value of a series at a time. Time is in Unix nanoseconds
// and is stored to Resolution. Status is the caller's, stored as is;
// NoValue marks a sample without a value (a bad quality, a gap), whose
// Value and Bytes are not stored.
type Sample struct {
	Time    int64
	Value   uint64 // Bool: 0 or 1; Int: the integer's bits; floats: math.Float64bits
	Bytes   []byte // the value of a Bytes series
	Status  uint32
	NoValue bool
}

// Resolution is the resolution of stored times: that of OPC UA's DateTime,
// so that what is stored is what a client was sent.
const Resolution = 100 // ns

func toTicks(ns int64) int64 {
	t := ns / Resolution
	if ns < 0 && ns%Resolution != 0 {
		t--
	}
	return t
}

// MaxBytesValue bounds the value of a Bytes sample.
const MaxBytesValue = 64 << 10

// Bucket widths of the delta-of-delta codes: a prefix of k ones and a
// zero (or the longest prefix, all ones) chooses width k-1; the first,
// zero, codes a delta-of-delta of 0 in one bit.
var (
	timeWidths = [...]int{0, 12, 14, 18, 24, 32, 64}
	intWidths  = [...]int{0, 6, 13, 20, 32, 64}
)

// putDoD writes d in the first bucket of widths that holds it.
func putDoD(w *bitWriter, d int64, widths []int) {
	last := len(widths) - 1
	for i, nb := range widths {
		if nb == 0 {
			if d == 0 {
				w.write(0, 1)
				return
			}
			continue
		}
		if i == last || fitsSigned(d, nb) {
			if i == last {
				w.write(1<<uint(i)-1, i) // all ones, no terminating zero
			} else {
				w.write(1<<uint(i+1)-2, i+1) // i ones, a zero
			}
			w.write(uint64(d), nb)
			return
		}
	}
}

func getDoD(r *bitReader, widths []int) int64 {
	last := len(widths) - 1
	i := r.pos >> 3
	if i < len(r.b) && r.b[i]<<uint(r.pos&7)&0x80 == 0 && widths[0] == 0 {
		r.pos++ // the most common: no change
		return 0
	}
	if i+8 <= len(r.b) {
		// One load for the prefix and, mostly, the value: 57 bits or more.
		w := binary.BigEndian.Uint64(r.b[i:]) << uint(r.pos&7)
		n := bits.LeadingZeros64(^w)
		prefix := n + 1
		if n >= last {
			n, prefix = last, last
		}
		nb := widths[n]
		if prefix+nb <= 57 {
			r.pos += prefix + nb
			if nb == 0 {
				return 0
			}
			return signExtend(w<<uint(prefix)>>uint(64-nb), nb)
		}
		r.pos += prefix
		return readSigned(r, nb)
	}
	return readSigned(r, widths[r.ones(last)])
}

// readSigned reads an nb-bit two's complement number (nb 0: zero).
func readSigned(r *bitReader, nb int) int64 {
	switch nb {
	case 0:
		return 0
	case 64:
		return int64(r.read(64))
	}
	return signExtend(r.read(nb), nb)
}

// codec is the state a chunk's encoder and decoder share: the previous
// sample's fields, which the next is written against.
type codec struct {
	kind    Kind
	noValue bool
	valued  bool  // a sample with a value came already
	lead    uint8 // floats: the window of the last XOR
	trail   uint8
	status  uint32
	n       int    // samples so far
	t, dt   int64  // ticks of the last sample and its delta
	v       uint64 // the last value
	dv      int64  // Int: its delta
	last    []byte // Bytes: the last value (in the stream)
}

// frameSize is the number of samples of a frame: a chunk's stream starts
// afresh every frameSize samples (byte-aligned, its state reset), so that
// a read can start at the frame of the time it wants instead of the
// chunk's first sample.
const frameSize = 1024

// frame is where a frame starts: its first sample's time (ticks) and its
// byte in the stream.
type frame struct {
	t   int64
	off uint32
}

// encoder appends samples to a chunk's stream.
type encoder struct {
	w bitWriter
	codec
	minT, maxT int64 // ticks
	frames     []frame
	delta      *deltaEncoder // Bytes: made at the first changed value
}

func (e *encoder) reset(kind Kind) {
	e.w.reset()
	e.codec = codec{kind: kind, last: e.last[:0]}
	e.minT, e.maxT = 0, 0
	e.frames = e.frames[:0]
}

// view is e's chunk as a block holds it: its samples, times, frames and
// stream, which it shares with e.
func (e *encoder) view() encoderView {
	return encoderView{n: e.n, minT: e.minT, maxT: e.maxT, frames: e.frames, stream: e.w.b}
}

// restart resets the state a frame starts without, keeping the count.
func (c *codec) restart() {
	c.t, c.dt, c.status, c.noValue, c.valued, c.v, c.dv, c.lead, c.trail = 0, 0, 0, false, false, 0, 0, 0, 0
	c.last = c.last[:0]
}

// append writes s, whose time in ticks is t (after the last one).
func (e *encoder) append(s *Sample, t int64) {
	w := &e.w
	if e.n%frameSize == 0 {
		w.n = len(w.b) * 8 // to the next byte
		e.frames = append(e.frames, frame{t: t, off: uint32(len(w.b))})
		e.restart()
		w.write(uint64(t), 64)
		w.write(uint64(s.Status), 32)
		w.bit(s.NoValue)
		if e.n == 0 {
			e.minT = t
		}
	} else {
		dt := t - e.t
		putDoD(w, dt-e.dt, timeWidths[:])
		e.dt = dt
		if s.Status == e.status && s.NoValue == e.noValue {
			w.write(0, 1)
		} else {
			w.write(1, 1)
			w.write(uint64(s.Status), 32)
			w.bit(s.NoValue)
		}
	}
	e.t, e.maxT = t, t
	e.status, e.noValue = s.Status, s.NoValue
	e.n++
	if !s.NoValue {
		e.putValue(s)
	}
}

func (e *encoder) putValue(s *Sample) {
	w := &e.w
	switch e.kind {
	case Bool:
		w.write(s.Value&1, 1)
	case Int:
		if !e.valued {
			w.write(s.Value, 64)
		} else {
			d := int64(s.Value - e.v)
			putDoD(w, d-e.dv, intWidths[:])
			e.dv = d
		}
	case Float32:
		x := uint64(math.Float32bits(float32(math.Float64frombits(s.Value))))
		e.putXOR(x, 32)
	case Float64:
		e.putXOR(s.Value, 64)
	case Bytes:
		if e.valued && string(s.Bytes) == string(e.last) {
			w.write(0, 1)
			break
		}
		if e.valued {
			w.write(1, 1)
			if e.delta == nil {
				e.delta = new(deltaEncoder)
			}
			var b [maxLenBytes]byte
			if ops := e.delta.encode(e.last, s.Bytes); 2+len(ops) < len(appendLen(b[:0], len(s.Bytes)))+len(s.Bytes) {
				w.write(deltaEscape, 8)
				w.write(0, 8)
				w.bytes(ops)
				e.last = append(e.last[:0], s.Bytes...)
				break
			}
		}
		putLen(w, len(s.Bytes))
		w.bytes(s.Bytes)
		e.last = append(e.last[:0], s.Bytes...)
	}
	e.v = s.Value
	e.valued = true
}

// putXOR writes value x of size bits (32 or 64) against the last, as
// Gorilla does: 0 for the same value; 10 and the meaningful bits when they
// fit the last window; 11, the leading zeros, the length and the bits.
func (e *encoder) putXOR(x uint64, size int) {
	w := &e.w
	if !e.valued {
		w.write(x, size)
		e.lead, e.trail = 0xff, 0
		return
	}
	prev := e.v
	if size == 32 {
		prev = uint64(math.Float32bits(float32(math.Float64frombits(e.v))))
	}
	xor := x ^ prev
	if xor == 0 {
		w.write(0, 1)
		return
	}
	lead := lead64(xor) - (64 - size)
	trail := trail64(xor)
	lb := 5
	if size == 64 {
		lb = 6
	}
	if lead >= 1<<uint(lb) {
		lead = 1<<uint(lb) - 1
	}
	if e.lead != 0xff && lead >= int(e.lead) && trail >= int(e.trail) {
		w.write(2, 2)
		nb := size - int(e.lead) - int(e.trail)
		w.write(xor>>e.trail, nb)
		return
	}
	nb := size - lead - trail
	w.write(3, 2)
	w.write(uint64(lead), lb)
	w.write(uint64(nb-1), lb)
	w.write(xor>>uint(trail), nb)
	e.lead, e.trail = uint8(lead), uint8(trail)
}

// putLen writes n in groups of 7 bits, each with a continuation bit
// (appendLen).
func putLen(w *bitWriter, n int) {
	var b [maxLenBytes]byte
	w.bytes(appendLen(b[:0], n))
}

func getLen(r *bitReader) int {
	n := 0
	for shift := 0; shift < 28; shift += 7 {
		c := r.read(8)
		n |= int(c&0x7f) << uint(shift)
		if c&0x80 == 0 {
			return n
		}
	}
	r.short = true
	return 0
}

// getValueLen reads the length of a Bytes value, or its delta escape
// (delta true).
func getValueLen(r *bitReader) (n int, delta bool) {
	at, short := r.pos, r.short
	if r.read(8) == deltaEscape && r.read(8) == 0 {
		return 0, true
	}
	r.pos, r.short = at, short
	return getLen(r), false
}

// errCorrupt is the error of a chunk that does not decode.
var errCorrupt = errors.New("corrupt chunk")

// decoder reads the samples of a chunk of n samples, or of a stream of
// limit bits (a head's, replayed from the log).
type decoder struct {
	r bitReader
	codec
	total int
	limit int    // bits; 0: none
	buf   []byte // Bytes values
	err   error
}

func (d *decoder) init(kind Kind, stream []byte, n int) {
	d.r = bitReader{b: stream}
	d.codec = codec{kind: kind, last: d.last[:0]}
	d.total = n
	d.limit = 0
	d.err = nil
}

// seek readies d to decode from frame i, which starts at byte off.
func (d *decoder) seek(i int, off uint32) {
	d.r.pos = int(off) * 8
	d.n = i * frameSize
	if int(off) > len(d.r.b) {
		d.err = errCorrupt
	}
}

// initBits readies d for the samples of the first nbits bits of stream.
func (d *decoder) initBits(kind Kind, stream []byte, nbits int) {
	d.init(kind, stream, math.MaxInt)
	d.limit = nbits
}

// next decodes the next sample into s (Time in ns), false at the end or
// on an error (then d.err).
func (d *decoder) next(s *Sample) bool {
	if d.n >= d.total || d.err != nil || d.limit > 0 && d.r.pos >= d.limit {
		return false
	}
	r := &d.r
	if d.n%frameSize == 0 {
		r.pos = (r.pos + 7) &^ 7
		d.restart()
		d.t = int64(r.read(64))
		d.status = uint32(r.read(32))
		d.noValue = r.bit()
	} else {
		d.dt += getDoD(r, timeWidths[:])
		d.t += d.dt
		if r.bit() {
			d.status = uint32(r.read(32))
			d.noValue = r.bit()
		}
	}
	d.n++
	s.Time = d.t * Resolution
	s.Status, s.NoValue = d.status, d.noValue
	s.Bytes = nil
	if d.noValue {
		s.Value = 0
	} else if !d.getValue(s) {
		return false
	}
	if r.short || d.limit > 0 && r.pos > d.limit {
		d.err = errCorrupt
		return false
	}
	return true
}

func (d *decoder) getValue(s *Sample) bool {
	r := &d.r
	switch d.kind {
	case Bool:
		d.v = r.read(1)
	case Int:
		if !d.valued {
			d.v = r.read(64)
		} else {
			d.dv += getDoD(r, intWidths[:])
			d.v += uint64(d.dv)
		}
	case Float32:
		x := d.getXOR(32)
		d.v = math.Float64bits(float64(math.Float32frombits(uint32(x))))
	case Float64:
		d.v = d.getXOR(64)
	case Bytes:
		if !d.valued || r.bit() {
			n, delta := getValueLen(r)
			if n > MaxBytesValue || r.short || delta && !d.valued {
				d.err = errCorrupt
				return false
			}
			d.buf = d.buf[:0]
			if delta {
				var ok bool
				if d.buf, ok = applyDelta(r, d.last, d.buf); !ok {
					d.err = errCorrupt
					return false
				}
			} else {
				for range n {
					d.buf = append(d.buf, byte(r.read(8)))
				}
			}
			d.last, d.buf = d.buf, d.last[:0]
		}
		s.Bytes = d.last
	default:
		d.err = errCorrupt
		return false
	}
	d.valued = true
	s.Value = d.v
	return true
}

// getXOR reads what putXOR wrote; prev is kept in d.v's size.
func (d *decoder) getXOR(size int) uint64 {
	r := &d.r
	if !d.valued {
		d.lead = 0xff
		return r.read(size)
	}
	prev := d.v
	if size == 32 {
		prev = uint64(math.Float32bits(float32(math.Float64frombits(d.v))))
	}
	if !r.bit() {
		return prev
	}
	lb := 5
	if size == 64 {
		lb = 6
	}
	if !r.bit() {
		if d.lead == 0xff {
			d.err = errCorrupt
			return prev
		}
		nb := size - int(d.lead) - int(d.trail)
		if nb <= 0 {
			d.err = errCorrupt
			return prev
		}
		return prev ^ r.read(nb)<<d.trail
	}
	lead := int(r.read(lb))
	nb := int(r.read(lb)) + 1
	trail := size - lead - nb
	if trail < 0 {
		d.err = errCorrupt
		return prev
	}
	d.lead, d.trail = uint8(lead), uint8(trail)
	return prev ^ r.read(nb)<<uint(trail)
}
