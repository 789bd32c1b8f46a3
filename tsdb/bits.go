package tsdb

import (
	"encoding/binary"
	"math/bits"
	"slices"
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
	if nb > 56 {
		w.write(v>>32, nb-32)
		nb = 32
	}
	if nb <= 0 {
		return
	}
	v &= 1<<uint(nb) - 1
	// The last byte's used bits and the nb new ones, aligned at the top of
	// one word (used+nb ≤ 63), go out as whole bytes.
	used := w.n & 7
	var acc uint64
	if used != 0 {
		last := len(w.b) - 1
		acc = uint64(w.b[last]) << 56
		w.b = w.b[:last]
	}
	acc |= v << uint(64-used-nb)
	var word [8]byte
	binary.BigEndian.PutUint64(word[:], acc)
	w.b = append(w.b, word[:(used+nb+7)>>3]...)
	w.n += nb
}

// bytes appends p, 8 bits a byte.
func (w *bitWriter) bytes(p []byte) {
	if w.n&7 == 0 {
		w.b = append(w.b, p...)
		w.n += 8 * len(p)
		return
	}
	for len(p) >= 8 {
		w.write(binary.BigEndian.Uint64(p)>>8, 56) // 7 bytes a write
		p = p[7:]
	}
	for _, c := range p {
		w.write(uint64(c), 8)
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

// copyBits appends bits [from, to) of src (a bitWriter's stream) to w: a
// few bits up to w's next byte, then whole bytes, shifted when src's bits
// do not start on a byte, then the rest.
func (w *bitWriter) copyBits(src []byte, from, to int) {
	if h := min((8-w.n&7)&7, to-from); h > 0 {
		r := bitReader{b: src, pos: from}
		w.write(r.read(h), h)
		from += h
	}
	if n := (to - from) >> 3; n > 0 {
		j, s := from>>3, uint(from&7)
		if s == 0 {
			w.b = append(w.b, src[j:j+n]...)
		} else {
			// 7 bytes a word while 8 of src can be loaded, then a byte at
			// a time; the word's eighth byte lands past the end and is
			// written over by the next.
			k := len(w.b)
			out := slices.Grow(w.b, n+8)[:k+n+8]
			end := j + n
			for ; end-j >= 7 && j+8 <= len(src); j, k = j+7, k+7 {
				binary.BigEndian.PutUint64(out[k:], binary.BigEndian.Uint64(src[j:])<<s)
			}
			for ; j < end; j, k = j+1, k+1 {
				out[k] = src[j]<<s | src[j+1]>>(8-s)
			}
			w.b = out[:k]
		}
		w.n += 8 * n
		from += 8 * n
	}
	if rest := to - from; rest > 0 {
		r := bitReader{b: src, pos: from}
		w.write(r.read(rest), rest)
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
