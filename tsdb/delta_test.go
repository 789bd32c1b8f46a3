package tsdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// eventRecords returns n records shaped as the server's event records:
// a fixed part per source (type, names, message), a random id, times
// and a state text that changes length, sources taking turns.
func eventRecords(rng *rand.Rand, n, sources int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		src := i % sources
		var b []byte
		b = fmt.Appendf(b, "\x02\x00type=OffNormalAlarmType;source=ns=2;s=sim.Tick%d;name=sim.Tick%d;", src, src)
		id := make([]byte, 16)
		for j := range id {
			id[j] = byte(rng.Uint32())
		}
		b = append(b, id...)
		b = fmt.Appendf(b, ";time=%d;receive=%d;", 1_800_000_000_000_000_000+int64(i)*5_000_000, 1_800_000_000_000_000_000+int64(i)*5_000_000+1234)
		if i/sources%2 == 0 {
			b = append(b, "active=Active;msg=the tick bit is set;severity=500;"...)
		} else {
			b = append(b, "active=Inactive;msg=the tick bit is set;severity=500;"...)
		}
		b = append(b, "enabled=Enabled;acked=Unacknowledged;confirmed=Unconfirmed;retain=true;quality=0;comment=;user=;"...)
		out[i] = b
	}
	return out
}

// TestBytesDelta: records that repeat the one before in most of their
// bytes decode as they were appended and take a fraction of their size.
func TestBytesDelta(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	recs := eventRecords(rng, 3000, 10) // three frames
	in := make([]Sample, len(recs))
	whole := 0
	for i, r := range recs {
		in[i] = Sample{Time: int64(i+1) * 5_000_000, Bytes: r}
		whole += len(r)
	}
	e := encodeAll(Bytes, in)
	checkDecode(t, Bytes, e.w.b, in)
	if got := len(e.w.b); got*3 > whole {
		t.Errorf("%d records of %d bytes in all took %d bytes: want at most a third", len(recs), whole, got)
	}
	t.Logf("%d records, %.1f bytes each, %.1f bytes each in the chunk", len(recs), float64(whole)/float64(len(recs)), float64(len(e.w.b))/float64(len(recs)))
}

// TestBytesDeltaEdges: values of every relation to the one before
// (equal, empty, grown, shrunk, unrelated, the largest) round-trip, and a
// value whose delta is not shorter is written whole, as format version
// 1 wrote it.
func TestBytesDeltaEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	big := random(MaxBytesValue)
	bigger := append(bytes.Clone(big[:MaxBytesValue/2]), random(MaxBytesValue/2)...)
	vals := [][]byte{
		[]byte("abcdefgh"), []byte("abcdefgh"), {}, []byte("abcdefgh"),
		[]byte("abcdefghijklmnop"), []byte("xxabcdefghijklmnop"), []byte("abcd"),
		random(300), random(300), big, bigger, big, []byte("abcdabcdabcdabcdabcd"), []byte("abcdabcdabcdabcdabcdabcd"),
	}
	in := make([]Sample, len(vals))
	for i, v := range vals {
		in[i] = Sample{Time: int64(i+1) * 1_000_000, Bytes: v}
	}
	checkDecode(t, Bytes, encodeAll(Bytes, in).w.b, in)

	// Unrelated values: the layout of version 1, bit for bit.
	prev, next := random(200), random(200)
	e := &encoder{}
	e.reset(Bytes)
	s := Sample{Time: 1_000_000, Bytes: prev}
	e.append(&s, toTicks(s.Time))
	before := e.w.n
	s = Sample{Time: 2_000_000, Bytes: next}
	e.append(&s, toTicks(s.Time))
	var want bitWriter
	want.copyBits(e.w.b, 0, before)
	putDoD(&want, toTicks(2_000_000)-toTicks(1_000_000), timeWidths[:]) // the time's delta of delta
	want.write(0, 1)                                                    // status unchanged
	want.write(1, 1)                                                    // the value changed
	putLen(&want, len(next))
	want.bytes(next)
	if want.n != e.w.n || !bytes.Equal(want.b, e.w.b) {
		t.Errorf("an unrelated value: %d bits, want %d as version 1 wrote them", e.w.n, want.n)
	}
}

// TestBytesDeltaCorrupt: a delta that copies from outside the value
// before, or grows past MaxBytesValue, is a corrupt chunk, not a panic.
func TestBytesDeltaCorrupt(t *testing.T) {
	prev := []byte("0123456789")
	for _, ops := range [][]byte{
		{0, 4, 8, 0},       // a copy past prev's end
		{0, 11, 0, 0},      // longer than prev
		{0, 4, 0x80, 1, 0}, // offset 128
		{3, 'a', 'b'},      // cut short
		{0xff, 0xff, 0x7f}, // a literal beyond MaxBytesValue
	} {
		var w bitWriter
		w.bytes(ops)
		r := bitReader{b: w.b}
		if out, ok := applyDelta(&r, prev, nil); ok {
			t.Errorf("ops %x: decoded to %q, want an error", ops, out)
		}
	}
	// Copies that each stay in bounds but together pass MaxBytesValue.
	var w bitWriter
	big := bytes.Repeat([]byte{'x'}, 1000)
	for range MaxBytesValue/1000 + 2 {
		w.bytes(appendLen(appendLen([]byte{0}, 1000), 0))
	}
	r := bitReader{b: w.b}
	if _, ok := applyDelta(&r, big, nil); ok {
		t.Errorf("copies beyond MaxBytesValue: decoded")
	}
}

// FuzzBytesDelta: any value against any value before it round-trips
// through a delta.
func FuzzBytesDelta(f *testing.F) {
	f.Add([]byte("abcdefghijkl"), []byte("abcdXXefghijkl"))
	f.Add([]byte{}, []byte("abcd"))
	f.Add([]byte("aaaaaaaaaaaa"), []byte("aaaaaaaaaaaaaaaaaaaaaaaa"))
	var d deltaEncoder
	f.Fuzz(func(t *testing.T, prev, v []byte) {
		if len(prev) > MaxBytesValue || len(v) > MaxBytesValue {
			return
		}
		ops := d.encode(prev, v)
		var w bitWriter
		w.write(1, 3) // off the byte boundary, as in a chunk
		w.bytes(ops)
		r := bitReader{b: w.b}
		r.read(3)
		got, ok := applyDelta(&r, prev, nil)
		if !ok || !bytes.Equal(got, v) {
			t.Fatalf("prev %q, v %q: delta %x decoded to %q (%v)", prev, v, ops, got, ok)
		}
	})
}

// BenchmarkBytesDelta: the delta of an event record against the one
// before.
func BenchmarkBytesDelta(b *testing.B) {
	recs := eventRecords(rand.New(rand.NewPCG(1, 1)), 64, 10)
	var d deltaEncoder
	b.SetBytes(int64(len(recs[1])))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d.encode(recs[i%63], recs[i%63+1])
	}
}

// TestReadsVersion1: files that say format version 1 (whose Bytes values
// are all whole) are read as before, the log's and the blocks'.
func TestReadsVersion1(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, testOpts(nil))
	id, err := db.Series("s", Bytes)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	var want []Sample
	for i := range 400 {
		v := make([]byte, 20)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		s := Sample{Time: int64(i+1) * 1_000_000, Bytes: v}
		if err := db.Append(id, &s); err != nil {
			t.Fatal(err)
		}
		want = append(want, s)
		if i == 199 {
			db.Cut() // the first half in a block, the rest in the log
		}
	}
	db.Tick()
	db.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || len(data) < headerSize {
			continue
		}
		if binary.LittleEndian.Uint16(data[8:]) != FormatVersion {
			t.Fatalf("%s: version %d", f, binary.LittleEndian.Uint16(data[8:]))
		}
		binary.LittleEndian.PutUint16(data[8:], 1)
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log logBuf
	db = mustOpen(t, dir, testOpts(&log))
	defer db.Close()
	id, _ = db.Series("s", Bytes)
	sameSamples(t, "version 1", collect(t, db, id, math.MinInt64, math.MaxInt64, false), norm(want))
	if log.String() != "" {
		t.Errorf("log: %s", log.String())
	}
	// The log segment appended to from now on says the current version.
	data, err := os.ReadFile(filepath.Join(dir, walName(db.wal.seg)))
	if err != nil || len(data) < headerSize || binary.LittleEndian.Uint16(data[8:]) != FormatVersion {
		t.Errorf("the open log segment's header: %x (%v), want version %d", data[:min(len(data), headerSize)], err, FormatVersion)
	}
}
