package tsdb

import (
	"encoding/binary"
	"math/bits"
)

// bitWriter appends bits, most significant first, to a byte slice that it
// owns: a chunk's stream. Its last byte may be partly filled; n counts the
// bits written.
type bitWriter struct {
	b []byte
	n int
}

// write appends the low nb bits of v (nb ≤ 64).
func (w *bitWriter) write(v uint64, nb int) {
	if nb < 64 {
		v &= 1<<uint(nb) - 1
	}
	for nb > 0 {
		free := 8 - w.n&7
		if free == 8 {
			w.b = append(w.b, 0)
		}
		take := min(free, nb)
		nb -= take
		chunk := byte(v >> uint(nb) & (1<<uint(take) - 1))
		w.b[len(w.b)-1] |= chunk << uint(free-take)
		w.n += take
	}
}

func (w *bitWriter) bit(b bool) {
	if b {
		w.write(1, 1)
	} else {
		w.write(0, 1)
	}
}

// reset empties w, keeping its memory.
func (w *bitWriter) reset() {
	clear(w.b)
	w.b = w.b[:0]
	w.n = 0
}

// bitReader reads what a bitWriter wrote. Reading past the end yields
// zeros and sets short; decoders check it.
type bitReader struct {
	b     []byte
	pos   int // in bits
	short bool
}

// read returns the next nb bits (nb ≤ 64).
func (r *bitReader) read(nb int) uint64 {
	if i := r.pos >> 3; nb <= 56 && i+8 <= len(r.b) && nb > 0 {
		// One load of the 8 bytes that hold the nb bits.
		w := binary.BigEndian.Uint64(r.b[i:])
		v := w << uint(r.pos&7) >> uint(64-nb)
		r.pos += nb
		return v
	}
	return r.readSlow(nb)
}

// readSlow is read of more than 56 bits or near the end of the stream.
func (r *bitReader) readSlow(nb int) uint64 {
	if nb > 56 {
		hi := r.read(nb - 32)
		return hi<<32 | r.read(32)
	}
	var v uint64
	for nb > 0 {
		i := r.pos >> 3
		if i >= len(r.b) {
			r.short = true
			return v << uint(nb)
		}
		avail := 8 - r.pos&7
		take := min(avail, nb)
		chunk := uint64(r.b[i]>>uint(avail-take)) & (1<<uint(take) - 1)
		v = v<<uint(take) | chunk
		nb -= take
		r.pos += take
	}
	return v
}

func (r *bitReader) bit() bool {
	if i := r.pos >> 3; i < len(r.b) {
		b := r.b[i] >> (7 - uint(r.pos&7)) & 1
		r.pos++
		return b == 1
	}
	r.short = true
	return false
}

// ones counts the 1 bits before the first 0, at most max (≤ 56; reading
// the 0 too when there is one): the prefix of a bucket code.
func (r *bitReader) ones(max int) int {
	if i := r.pos >> 3; i+8 <= len(r.b) {
		w := binary.BigEndian.Uint64(r.b[i:]) << uint(r.pos&7)
		n := bits.LeadingZeros64(^w)
		if n >= max {
			r.pos += max
			return max
		}
		r.pos += n + 1
		return n
	}
	n := 0
	for n < max && r.bit() {
		n++
	}
	return n
}

// copyBits appends bits [from, to) of src (a bitWriter's stream) to w.
func (w *bitWriter) copyBits(src []byte, from, to int) {
	r := bitReader{b: src, pos: from}
	for n := to - from; n > 0; {
		take := min(n, 56)
		w.write(r.read(take), take)
		n -= take
	}
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// fitsSigned reports whether v fits in nb bits as two's complement.
func fitsSigned(v int64, nb int) bool {
	lo := -(int64(1) << uint(nb-1))
	return v >= lo && v < -lo
}

// signExtend reads the low nb bits of u as two's complement.
func signExtend(u uint64, nb int) int64 {
	s := uint(64 - nb)
	return int64(u<<s) >> s
}

func lead64(x uint64) int  { return bits.LeadingZeros64(x) }
func trail64(x uint64) int { return bits.TrailingZeros64(x) }
