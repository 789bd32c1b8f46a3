package tsdb

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// refBits is a bit stream kept one bool a bit: what a bitWriter's bytes
// must hold.
type refBits []bool

func (r *refBits) write(v uint64, nb int) {
	for i := nb - 1; i >= 0; i-- {
		*r = append(*r, v>>uint(i)&1 == 1)
	}
}

func (r refBits) bytes() []byte {
	b := make([]byte, (len(r)+7)/8)
	for i, x := range r {
		if x {
			b[i/8] |= 0x80 >> uint(i%8)
		}
	}
	return b
}

// TestBitWriter writes, appends bytes and copies bit ranges at every
// alignment against the one-bool-a-bit reference.
func TestBitWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		var w bitWriter
		var ref refBits
		for range rng.IntN(40) {
			switch rng.IntN(3) {
			case 0:
				nb := rng.IntN(65)
				v := rng.Uint64()
				w.write(v, nb)
				ref.write(v, nb)
			case 1:
				p := make([]byte, rng.IntN(40))
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
				w.bytes(p)
				for _, c := range p {
					ref.write(uint64(c), 8)
				}
			case 2:
				var src bitWriter
				var sref refBits
				for range rng.IntN(12) {
					nb := 1 + rng.IntN(64)
					v := rng.Uint64()
					src.write(v, nb)
					sref.write(v, nb)
				}
				from := rng.IntN(src.n + 1)
				to := from + rng.IntN(src.n-from+1)
				w.copyBits(src.b, from, to)
				ref = append(ref, sref[from:to]...)
			}
			if w.n != len(ref) || !bytes.Equal(w.b, ref.bytes()) {
				t.Fatalf("round %d: %d bits %x, want %d bits %x", round, w.n, w.b, len(ref), ref.bytes())
			}
		}
	}
}
