package tsdb

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// randomSamples returns n samples of kind with increasing times, status
// changes and samples without a value.
func randomSamples(rng *rand.Rand, kind Kind, n int) []Sample {
	out := make([]Sample, n)
	t := int64(1_700_000_000) * 1e9
	v := rng.Uint64()
	for i := range out {
		switch rng.IntN(4) {
		case 0:
			t += 5_000_000
		case 1:
			t += 5_000_000 + rng.Int64N(400_000) - 200_000
		case 2:
			t += rng.Int64N(1e12) + 100
		default:
			t += 100
		}
		s := Sample{Time: t}
		if rng.IntN(10) == 0 {
			s.Status = rng.Uint32()
		}
		if rng.IntN(12) == 0 {
			s.NoValue = true
		} else {
			switch kind {
			case Bool:
				v = rng.Uint64() & 1
			case Int:
				switch rng.IntN(3) {
				case 0:
					v++
				case 1:
					v = rng.Uint64()
				}
			case Float32:
				v = math.Float64bits(float64(float32(rng.NormFloat64() * 100)))
			case Float64:
				if rng.IntN(3) > 0 {
					v = math.Float64bits(math.Sin(float64(t) / 1e9))
				}
			case Bytes:
				if rng.IntN(3) == 0 {
					b := make([]byte, rng.IntN(300))
					for j := range b {
						b[j] = byte(rng.Uint32())
					}
					s.Bytes = b
				} else if i > 0 {
					s.Bytes = out[i-1].Bytes
				}
			}
			if kind != Bytes {
				s.Value = v
			}
		}
		out[i] = s
	}
	return out
}

func randomSamplesSeeded(kind Kind, n int) []Sample {
	return randomSamples(rand.New(rand.NewPCG(uint64(kind), 99)), kind, n)
}

func encodeAll(kind Kind, in []Sample) *encoder {
	e := &encoder{}
	e.reset(kind)
	for i := range in {
		e.append(&in[i], toTicks(in[i].Time))
	}
	return e
}

func checkDecode(t *testing.T, kind Kind, stream []byte, want []Sample) {
	t.Helper()
	var d decoder
	d.init(kind, stream, len(want))
	var got Sample
	for i := range want {
		if !d.next(&got) {
			t.Fatalf("%v: sample %d: no sample (err %v)", kind, i, d.err)
		}
		w := want[i]
		w.Time = toTicks(w.Time) * Resolution
		if w.NoValue {
			w.Value, w.Bytes = 0, nil
		}
		if got.Time != w.Time || got.Status != w.Status || got.NoValue != w.NoValue || got.Value != w.Value || !bytes.Equal(got.Bytes, w.Bytes) {
			t.Fatalf("%v: sample %d: got %+v, want %+v", kind, i, got, w)
		}
	}
	if d.next(&got) {
		t.Fatalf("%v: a sample beyond the count", kind)
	}
}

func TestChunkRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []Kind{Bool, Int, Float32, Float64, Bytes} {
		for range 20 {
			in := randomSamples(rng, kind, 1+rng.IntN(500))
			e := encodeAll(kind, in)
			checkDecode(t, kind, e.w.b, in)
		}
	}
}

// TestChunkResume: a stream cut anywhere into fragments and put together
// again (as the write-ahead log does) decodes to the same samples.
func TestChunkResume(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	in := randomSamples(rng, Float64, 300)
	e := &encoder{}
	e.reset(Float64)
	var joined bitWriter
	flushed := 0
	for i := range in {
		e.append(&in[i], toTicks(in[i].Time))
		if rng.IntN(7) == 0 {
			joined.copyBits(e.w.b, flushed, e.w.n)
			flushed = e.w.n
		}
	}
	joined.copyBits(e.w.b, flushed, e.w.n)
	if !bytes.Equal(joined.b, e.w.b) || joined.n != e.w.n {
		t.Fatalf("joined stream differs")
	}
	checkDecode(t, Float64, joined.b, in)
}

// TestChunkTruncated: a stream cut short never decodes past its end
// without an error.
func TestChunkTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, kind := range []Kind{Bool, Int, Float32, Float64, Bytes} {
		in := randomSamples(rng, kind, 50)
		e := encodeAll(kind, in)
		for cut := 0; cut < len(e.w.b); cut++ {
			var d decoder
			d.init(kind, e.w.b[:cut], len(in))
			var s Sample
			n := 0
			for d.next(&s) {
				n++
			}
			if n == len(in) {
				t.Fatalf("%v: cut at %d of %d bytes: all samples decoded", kind, cut, len(e.w.b))
			}
			if d.err == nil {
				t.Fatalf("%v: cut at %d: no error after %d samples", kind, cut, n)
			}
		}
	}
}

func FuzzChunkDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, kind := range []Kind{Bool, Int, Float32, Float64, Bytes} {
		e := encodeAll(kind, randomSamples(rng, kind, 20))
		f.Add(uint8(kind), e.w.b, uint16(20))
	}
	recs := eventRecords(rng, 20, 3) // values written as deltas
	in := make([]Sample, len(recs))
	for i, r := range recs {
		in[i] = Sample{Time: int64(i+1) * 1e6, Bytes: r}
	}
	f.Add(uint8(Bytes), encodeAll(Bytes, in).w.b, uint16(len(in)))
	f.Fuzz(func(t *testing.T, kind uint8, stream []byte, n uint16) {
		var d decoder
		d.init(Kind(kind), stream, int(n))
		var s Sample
		for d.next(&s) {
		}
	})
}

func TestChunkSize(t *testing.T) {
	// A counter read every 5 ms, the reads' times off by up to ±100 µs,
	// +1 per read: the bits per sample.
	rng := rand.New(rand.NewPCG(9, 10))
	n := 10000
	in := make([]Sample, n)
	base := int64(1_700_000_000) * 1e9
	for i := range in {
		in[i] = Sample{Time: base + int64(i)*5e6 + rng.Int64N(200_000) - 100_000, Value: uint64(i)}
	}
	e := encodeAll(Int, in)
	t.Logf("counter at 5 ms, ±100 µs: %.2f bits/sample", float64(e.w.n)/float64(n))
	for i := range in {
		in[i] = Sample{Time: base + int64(i)*1e9 + rng.Int64N(200_000) - 100_000, Value: uint64(i * 200)}
	}
	e = encodeAll(Int, in)
	t.Logf("counter at 1 s, ±100 µs: %.2f bits/sample", float64(e.w.n)/float64(n))
}

// BenchmarkDecode decodes a counter's samples: every second on the
// second, and every 5 ms as a scan stamps them (a few µs late or early).
func BenchmarkDecode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name   string
		period int64
		jitter int64
	}{{"1s", 1e9, 0}, {"5ms-jitter", 5e6, 40e3}} {
		in := make([]Sample, 10000)
		for i := range in {
			t := 1_700_000_000e9 + int64(i)*c.period
			if c.jitter > 0 {
				t += rng.Int64N(c.jitter) - c.jitter/2
			}
			in[i] = Sample{Time: t, Value: uint64(i * 200)}
		}
		e := encodeAll(Int, in)
		b.Run(c.name, func(b *testing.B) {
			var d decoder
			var s Sample
			for i := 0; i < b.N; i += len(in) {
				d.init(Int, e.w.b, len(in))
				for d.next(&s) {
				}
			}
		})
	}
}
