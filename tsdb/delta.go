package tsdb

// A Bytes value that is not the one before it in its frame is written
// whole (putLen, then its bytes) or, when that is shorter, as a delta
// against the one before: the escape (a length of 0 in two groups, which
// putLen never writes), then
//
//	repeated: [len] L, L bytes of the value; [len] C, the length of a
//	          copy from the value before (0: the value ends here);
//	          when C > 0, [len] the copy's offset in the value before
//
// Records of one source repeat most of the record before them (an
// event's type, source, message and field names), so a delta is a
// fraction of the record. Decoders of format version 1 did not know
// the escape; files with deltas are version 2.

// deltaEscape is the first byte of the escape; the second is 0.
const deltaEscape = 0x80

// minMatch is the shortest copy a delta makes: a copy costs 2 or 3 bytes.
const minMatch = 4

// deltaEncoder makes deltas; it keeps its memory between values.
type deltaEncoder struct {
	table [1 << 9]int32 // hash of 4 bytes of the value before → position+1
	ops   []byte
}

func hash4(b []byte) uint32 {
	return (uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24) * 2654435761 >> 23
}

func same4(a, b []byte) bool {
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3]
}

// encode returns the delta of v against prev (without the escape): valid
// until the next call.
func (d *deltaEncoder) encode(prev, v []byte) []byte {
	clear(d.table[:])
	for i := len(prev) - minMatch; i >= 0; i-- { // the first position wins
		d.table[hash4(prev[i:])] = int32(i + 1)
	}
	ops := d.ops[:0]
	lit, next := 0, 0 // start of the bytes not yet written; end of the last copy in prev
	for i := 0; i+minMatch <= len(v); {
		// Where a copy would come from: the place that keeps the two
		// values aligned (the bytes since the last copy replaced as
		// many), else where the hash saw these 4 bytes.
		j := next + i - lit
		if j+minMatch > len(prev) || !same4(prev[j:], v[i:]) {
			j = int(d.table[hash4(v[i:])]) - 1
			if j < 0 || !same4(prev[j:], v[i:]) {
				i++
				continue
			}
		}
		n := minMatch
		for i+n < len(v) && j+n < len(prev) && v[i+n] == prev[j+n] {
			n++
		}
		ops = appendLen(ops, i-lit)
		ops = append(ops, v[lit:i]...)
		ops = appendLen(ops, n)
		ops = appendLen(ops, j)
		i += n
		lit, next = i, j+n
	}
	ops = appendLen(ops, len(v)-lit)
	ops = append(ops, v[lit:]...)
	ops = appendLen(ops, 0)
	d.ops = ops
	return ops
}

// appendLen appends n in groups of 7 bits, each with a continuation bit.
func appendLen(b []byte, n int) []byte {
	for n >= 0x80 {
		b = append(b, byte(n&0x7f)|0x80)
		n >>= 7
	}
	return append(b, byte(n))
}

// maxLenBytes is the most bytes appendLen writes for a length the
// store takes (below 2^28, as getLen reads).
const maxLenBytes = 5

// applyDelta reads a delta (after its escape) against prev, appending the
// value to out; false when the delta is corrupt (a copy outside prev, a
// value beyond MaxBytesValue, a stream cut short).
func applyDelta(r *bitReader, prev, out []byte) ([]byte, bool) {
	for {
		l := getLen(r)
		if r.short || l > MaxBytesValue-len(out) {
			return out, false
		}
		for range l {
			out = append(out, byte(r.read(8)))
		}
		c := getLen(r)
		if r.short {
			return out, false
		}
		if c == 0 {
			return out, true
		}
		o := getLen(r)
		if r.short || o > len(prev) || c > len(prev)-o || c > MaxBytesValue-len(out) {
			return out, false
		}
		out = append(out, prev[o:o+c]...)
	}
}
