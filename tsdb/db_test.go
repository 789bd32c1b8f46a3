package tsdb

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBuf collects what a store logs.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func testOpts(log *logBuf) Options {
	o := Options{FlushInterval: time.Hour, Reserve: -1}
	if log != nil {
		o.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	} else {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func mustOpen(t testing.TB, dir string, o Options) *DB {
	t.Helper()
	db, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func collect(t *testing.T, db *DB, id SeriesID, from, to int64, reverse bool) []Sample {
	t.Helper()
	var out []Sample
	err := db.Scan(id, from, to, reverse, 0xdead, func(s *Sample) bool {
		c := *s
		c.Bytes = bytes.Clone(s.Bytes)
		out = append(out, c)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func norm(in []Sample) []Sample {
	out := make([]Sample, len(in))
	for i, s := range in {
		s.Time = toTicks(s.Time) * Resolution
		if s.NoValue {
			s.Value, s.Bytes = 0, nil
		}
		if s.Bytes != nil && len(s.Bytes) == 0 {
			s.Bytes = []byte{}
		}
		out[i] = s
	}
	return out
}

func sameSamples(t *testing.T, what string, got, want []Sample) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d samples, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Time != w.Time || g.Status != w.Status || g.NoValue != w.NoValue || g.Value != w.Value || !bytes.Equal(g.Bytes, w.Bytes) {
			t.Fatalf("%s: sample %d: %+v, want %+v", what, i, g, w)
		}
	}
}

func reversed(in []Sample) []Sample {
	out := make([]Sample, len(in))
	for i := range in {
		out[len(in)-1-i] = in[i]
	}
	return out
}

// TestStoreRoundTrip appends series of every kind across head, cold and
// blocks and a reopen, and reads them back whole, in ranges and in
// reverse.
func TestStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 12))
	kinds := []Kind{Bool, Int, Float32, Float64, Bytes}
	want := map[SeriesID][]Sample{}
	db := mustOpen(t, dir, testOpts(nil))
	ids := map[SeriesID]Kind{}
	for i, k := range kinds {
		id, err := db.Series(fmt.Sprintf("s%d", i), k)
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = k
		want[id] = norm(randomSamples(rng, k, 900))
	}
	for part := range 3 {
		for id := range ids {
			for _, s := range want[id][part*300 : (part+1)*300] {
				if err := db.Append(id, &s); err != nil {
					t.Fatal(err)
				}
			}
		}
		if part < 2 {
			if err := db.Cut(); err != nil {
				t.Fatal(err)
			}
		} else {
			db.Tick() // in the log only
		}
	}
	check := func(db *DB, when string) {
		for id := range ids {
			w := want[id]
			sameSamples(t, when+" all", collect(t, db, id, math.MinInt64, math.MaxInt64, false), w)
			sameSamples(t, when+" reverse", collect(t, db, id, math.MinInt64, math.MaxInt64, true), reversed(w))
			a, b := rng.IntN(len(w)), rng.IntN(len(w))
			a, b = min(a, b), max(a, b)
			sameSamples(t, when+" range", collect(t, db, id, w[a].Time, w[b].Time, false), w[a:b+1])
			sameSamples(t, when+" reverse range", collect(t, db, id, w[a].Time, w[b].Time, true), reversed(w[a:b+1]))
		}
	}
	check(db, "open")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, testOpts(nil))
	defer db.Close()
	check(db, "reopened")
	var st Stats
	db.Stats(&st)
	if st.Blocks != 2 || st.Series != len(kinds) || st.BlockSamples != uint64(2*300*len(kinds)) || st.BlockBytes <= 0 || st.Bytes <= st.BlockBytes {
		t.Fatalf("stats %+v", st)
	}
	// Appending continues after the reopened head, in order.
	for id := range ids {
		last := want[id][len(want[id])-1]
		s := Sample{Time: last.Time, Value: 1}
		if err := db.Append(id, &s); err != ErrOutOfOrder {
			t.Fatalf("append at the last time: %v", err)
		}
		s.Time += Resolution
		if err := db.Append(id, &s); err != nil {
			t.Fatal(err)
		}
	}
}

func appendN(t *testing.T, db *DB, id SeriesID, start int64, n int) []Sample {
	t.Helper()
	var out []Sample
	for i := range n {
		s := Sample{Time: start + int64(i)*int64(time.Second), Value: math.Float64bits(float64(i))}
		if err := db.Append(id, &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestTornTail cuts the log at every length and checks that the store
// opens with the whole records before the cut, says so, and goes on
// appending after them.
func TestTornTail(t *testing.T) {
	src := t.TempDir()
	db := mustOpen(t, src, testOpts(nil))
	id, _ := db.Series("x", Float64)
	var want []Sample
	base := int64(1_700_000_000) * 1e9
	var sizes []int64
	for i := range 6 {
		want = append(want, appendN(t, db, id, base+int64(i)*10e9, 10)...)
		db.Tick()
		sizes = append(sizes, db.wal.size)
	}
	walPath := filepath.Join(src, walName(db.wal.seg))
	db.mu.Lock()
	db.closed = true // as if the power went: no close record
	db.mu.Unlock()
	full, err := os.ReadFile(walPath)
	if err != nil {
		t.Fatal(err)
	}
	for cut := int64(0); cut <= int64(len(full)); cut++ {
		dir := t.TempDir()
		for _, name := range []string{seriesFile, filepath.Base(walPath)} {
			b, _ := os.ReadFile(filepath.Join(src, name))
			if name != seriesFile {
				b = b[:cut]
			}
			os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		var log logBuf
		db2, err := Open(dir, testOpts(&log))
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		whole := 0
		for _, s := range sizes {
			if s <= cut {
				whole++
			}
		}
		got := collect(t, db2, id, math.MinInt64, math.MaxInt64, false)
		sameSamples(t, fmt.Sprintf("cut at %d", cut), got, norm(want[:10*whole]))
		torn := cut > headerSize && (whole == 0 || cut != sizes[whole-1])
		if torn != strings.Contains(log.String(), "torn tail cut off") {
			t.Fatalf("cut at %d: torn %v, log %q", cut, torn, log.String())
		}
		more := appendN(t, db2, id, base+100e9, 3)
		db2.Tick()
		db2.Close()
		db3 := mustOpen(t, dir, testOpts(nil))
		got = collect(t, db3, id, math.MinInt64, math.MaxInt64, false)
		sameSamples(t, fmt.Sprintf("cut at %d, appended after", cut), got, norm(append(append([]Sample(nil), want[:10*whole]...), more...)))
		db3.Close()
	}
}

// TestUnwrittenBlock: a cut whose block was not written (the power went
// between the new log segment and the block) is made a block at Open.
func TestUnwrittenBlock(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, testOpts(nil))
	id, _ := db.Series("x", Float64)
	base := int64(1_700_000_000) * 1e9
	want := appendN(t, db, id, base, 20)
	db.Tick()
	seg := db.wal.seg
	db.mu.Lock()
	db.closed = true
	db.mu.Unlock()
	// The next segment exists, the block does not.
	w, err := createWAL(dir, seg+1)
	if err != nil {
		t.Fatal(err)
	}
	w.f.Close()
	db2 := mustOpen(t, dir, testOpts(nil))
	defer db2.Close()
	sameSamples(t, "after", collect(t, db2, id, math.MinInt64, math.MaxInt64, false), norm(want))
	var st Stats
	db2.Stats(&st)
	if st.Blocks != 1 {
		t.Fatalf("%d blocks", st.Blocks)
	}
	if _, err := os.Stat(filepath.Join(dir, walName(seg))); !os.IsNotExist(err) {
		t.Fatalf("the old segment is still there: %v", err)
	}
}

// TestCorruptBlock: a chunk that fails its checksum stands as a lost
// sample, the other series and blocks read on; a footer that fails, a
// block of a newer format version, are reported and skipped.
func TestCorruptBlock(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, testOpts(nil))
	a, _ := db.Series("a", Float64)
	b, _ := db.Series("b", Float64)
	base := int64(1_700_000_000) * 1e9
	var wantA, wantB [][]Sample
	for i := range 3 {
		wantA = append(wantA, appendN(t, db, a, base+int64(i)*100e9, 10))
		wantB = append(wantB, appendN(t, db, b, base+int64(i)*100e9, 10))
		if err := db.Cut(); err != nil {
			t.Fatal(err)
		}
	}
	blocks := append([]*block(nil), db.blocks...)
	db.Close()
	// Block 0: flip a byte in a's chunk (the first after the header).
	flip(t, blocks[0].path, headerSize+20)
	var log logBuf
	db = mustOpen(t, dir, testOpts(&log))
	got := collect(t, db, a, math.MinInt64, math.MaxInt64, false)
	want := append([]Sample{{Time: toTicks(base) * Resolution, NoValue: true, Status: 0xdead}}, norm(append(wantA[1], wantA[2]...))...)
	sameSamples(t, "a, chunk corrupt", got, want)
	sameSamples(t, "b", collect(t, db, b, math.MinInt64, math.MaxInt64, false), norm(append(append(wantB[0], wantB[1]...), wantB[2]...)))
	if !strings.Contains(log.String(), "fails its checksum") {
		t.Fatalf("log: %s", log.String())
	}
	db.Close()
	// Block 1: its footer; block 2: a newer format.
	fi, _ := os.Stat(blocks[1].path)
	flip(t, blocks[1].path, int(fi.Size())-footerSize+17)
	data, _ := os.ReadFile(blocks[2].path)
	data[8] = FormatVersion + 1
	os.WriteFile(blocks[2].path, data, 0o644)
	log = logBuf{}
	db = mustOpen(t, dir, testOpts(&log))
	defer db.Close()
	got = collect(t, db, b, math.MinInt64, math.MaxInt64, false)
	sameSamples(t, "b, blocks 1 and 2 skipped", got, norm(wantB[0]))
	for _, s := range []string{"footer fails its checksum", fmt.Sprintf("format version %d, this edged reads up to %d", FormatVersion+1, FormatVersion)} {
		if !strings.Contains(log.String(), s) {
			t.Fatalf("log lacks %q: %s", s, log.String())
		}
	}
	var st Stats
	db.Stats(&st)
	if st.Unreadable != 2 || st.Blocks != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func flip(t *testing.T, path string, at int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[at] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFutureLog: a log segment of a newer format is an error of Open,
// which leaves it alone.
func TestFutureLog(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, testOpts(nil))
	id, _ := db.Series("x", Int)
	appendN(t, db, id, 1e18, 3)
	db.Close()
	path := filepath.Join(dir, walName(0))
	data, _ := os.ReadFile(path)
	data[8] = 9
	os.WriteFile(path, data, 0o644)
	_, err := Open(dir, testOpts(nil))
	if err == nil || !strings.Contains(err.Error(), "format version 9") {
		t.Fatalf("open: %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, data) {
		t.Fatal("the log was changed")
	}
}

// TestRetention: the store's bounds remove the oldest blocks; a series'
// own bounds hide its older samples, and a block every series of which
// is past its bound goes.
func TestRetention(t *testing.T) {
	dir := t.TempDir()
	now := int64(1_700_000_000) * 1e9
	o := testOpts(nil)
	o.Now = func() time.Time { return time.Unix(0, now) }
	o.MaxAge = time.Hour
	db := mustOpen(t, dir, o)
	defer db.Close()
	a, _ := db.Series("a", Float64)
	b, _ := db.Series("b", Float64)
	for i := range 4 {
		appendN(t, db, a, now-int64(4-i)*int64(time.Hour)+1, 10)
		if err := db.Cut(); err != nil {
			t.Fatal(err)
		}
	}
	db.Tick()
	var st Stats
	db.Stats(&st)
	if st.Blocks != 1 {
		t.Fatalf("age bound: %d blocks", st.Blocks)
	}
	// A series' own age bound: a's older block is hidden, then removed,
	// as a is the only series in it.
	appendN(t, db, a, now-int64(50*time.Minute), 10)
	if err := db.Cut(); err != nil {
		t.Fatal(err)
	}
	appendN(t, db, a, now+1, 10)
	appendN(t, db, b, now+1, 10)
	db.SetRetention(a, 30*time.Minute, 0)
	got := collect(t, db, a, math.MinInt64, math.MaxInt64, false)
	if len(got) != 10 || got[0].Time < now {
		t.Fatalf("own bound: %d samples", len(got))
	}
	if n := len(collect(t, db, b, math.MinInt64, math.MaxInt64, false)); n != 10 {
		t.Fatalf("b: %d", n)
	}
	// Both blocks hold a's samples only, older than its bound.
	if err := db.Cut(); err != nil { // b's samples in a block of their own
		t.Fatal(err)
	}
	db.Stats(&st)
	if st.Blocks != 3 {
		t.Fatalf("%d blocks", st.Blocks)
	}
	db.Tick()
	db.Stats(&st)
	if st.Blocks != 1 {
		t.Fatalf("blocks of hidden samples: %d blocks left, want 1", st.Blocks)
	}
	if n := len(collect(t, db, b, math.MinInt64, math.MaxInt64, false)); n != 10 {
		t.Fatalf("b: %d", n)
	}
	// Byte bounds of the store.
	db.Configure(Options{FlushInterval: time.Hour, MaxBytes: 1, Reserve: -1})
	if err := db.Cut(); err != nil {
		t.Fatal(err)
	}
	db.Tick()
	db.Stats(&st)
	if st.Blocks != 0 {
		t.Fatalf("byte bound: %d blocks", st.Blocks)
	}
}

// TestReserve: below the reserve the oldest blocks go; with none left the
// store pauses, samples stay in memory up to four heads, then are refused
// with ErrFull; with space again it writes on and says so.
func TestReserve(t *testing.T) {
	dir := t.TempDir()
	var free int64 = 1 << 40
	restore := SetFreeSpace(func(string) (int64, bool) { return free, true })
	defer restore()
	var log logBuf
	o := testOpts(&log)
	o.Reserve = 1 << 20
	o.HeadBytes = 4 << 10
	db := mustOpen(t, dir, o)
	defer db.Close()
	id, _ := db.Series("x", Float64)
	base := int64(1_700_000_000) * 1e9
	for i := range 3 {
		appendN(t, db, id, base+int64(i)*1e12, 5)
		if err := db.Cut(); err != nil {
			t.Fatal(err)
		}
	}
	free = 1 << 19 // below the reserve
	appendN(t, db, id, base+4e12, 5)
	db.Tick()
	var st Stats
	db.Stats(&st)
	if st.Blocks != 0 || st.Paused == "" {
		t.Fatalf("stats %+v", st)
	}
	if !strings.Contains(log.String(), "paused") {
		t.Fatalf("log: %s", log.String())
	}
	// Samples are kept while they fit, then refused.
	var err error
	n := 0
	for ; err == nil; n++ {
		s := Sample{Time: base + 5e12 + int64(n)*1e9, Value: rand.Uint64()}
		err = db.Append(id, &s)
	}
	if err != ErrFull {
		t.Fatalf("after %d: %v", n, err)
	}
	free = 1 << 40
	db.Tick()
	db.Tick()
	db.Stats(&st)
	if st.Paused != "" || st.Dropped != 1 {
		t.Fatalf("stats %+v", st)
	}
	if !strings.Contains(log.String(), "writing again") {
		t.Fatalf("log: %s", log.String())
	}
	if got := collect(t, db, id, base+5e12, math.MaxInt64, false); len(got) != n-1 {
		t.Fatalf("%d samples kept, want %d", len(got), n-1)
	}
}

// TestColdRead: while a cut's block cannot be written (no space beyond
// the reserve), its samples are read from the cold generation beside the
// head's; once written, from the block.
func TestColdRead(t *testing.T) {
	var free int64 = 1 << 40
	restore := SetFreeSpace(func(string) (int64, bool) { return free, true })
	defer restore()
	o := testOpts(nil)
	o.Reserve = 1 << 20
	o.HeadBytes = 4 << 10
	now := time.Now()
	o.Now = func() time.Time { return now }
	db := mustOpen(t, t.TempDir(), o)
	defer db.Close()
	id, _ := db.Series("x", Float64)
	rng := rand.New(rand.NewPCG(3, 4))
	tm := int64(1_700_000_000) * 1e9
	var want []Sample
	add := func(n int) {
		for range n {
			tm += 1e9
			s := Sample{Time: tm, Value: math.Float64bits(rng.Float64())}
			if err := db.Append(id, &s); err != nil {
				t.Fatal(err)
			}
			want = append(want, s)
		}
	}
	free = o.Reserve + 2<<10 // room for the log's records, not for a block
	for i := 0; !db.ColdPending(); i++ {
		if i == 100 {
			t.Fatal("no cut waits for its block")
		}
		add(50)
		db.Tick()
	}
	add(20)
	sameSamples(t, "cold and head", collect(t, db, id, math.MinInt64, math.MaxInt64, false), want)
	sameSamples(t, "cold and head, reverse", collect(t, db, id, math.MinInt64, math.MaxInt64, true), reversed(want))
	free = 1 << 40
	now = now.Add(time.Minute) // past the retry's wait
	db.Tick()
	if db.ColdPending() {
		t.Fatal("the block is not written with space again")
	}
	sameSamples(t, "block and head", collect(t, db, id, math.MinInt64, math.MaxInt64, false), want)
}

// TestAppendAllocs: appending in the steady state does not allocate.
func TestAppendAllocs(t *testing.T) {
	db := mustOpen(t, t.TempDir(), testOpts(nil))
	defer db.Close()
	var ids []SeriesID
	for i := range 100 {
		id, _ := db.Series(fmt.Sprint(i), Float64)
		ids = append(ids, id)
	}
	tm := int64(1_700_000_000) * 1e9
	round := func() {
		tm += 1e9
		for _, id := range ids {
			s := Sample{Time: tm + int64(id)*1000, Value: math.Float64bits(math.Sin(float64(tm)))}
			db.Append(id, &s)
		}
	}
	// Two generations: the head's and the cold's buffers have grown.
	for range 2 {
		for range 300 {
			round()
		}
		if err := db.Cut(); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		round()
	}
	if a := testing.AllocsPerRun(200, round); a != 0 {
		t.Fatalf("%v allocations per 100 samples", a)
	}
}

// BenchmarkAppend: one sample of one of 10,000 series at a time, as the
// historian appends a second's samples, with the flushes and block cuts
// that follow (their CPU counted, the disk's wait not).
func BenchmarkAppend(b *testing.B) {
	db := mustOpen(b, b.TempDir(), testOpts(nil))
	defer db.Close()
	const n = 10000
	ids := make([]SeriesID, n)
	for i := range ids {
		ids[i], _ = db.Series(fmt.Sprint(i), Float64)
	}
	tm := int64(1_700_000_000) * 1e9
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % n
		if k == 0 {
			tm += 1e9
			if i > 0 && i%(10*n) == 0 {
				db.Tick()
			}
		}
		s := Sample{Time: tm, Value: math.Float64bits(float64(i / n))}
		db.Append(ids[k], &s)
	}
}

// TestFrames: a series of many frames reads right from any time, forward
// and back, in the head, in a block, and after a replay of the log.
func TestFrames(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(21, 22))
	db := mustOpen(t, dir, testOpts(nil))
	ids := map[Kind]SeriesID{}
	want := map[Kind][]Sample{}
	for _, k := range []Kind{Int, Float64, Bytes} {
		id, _ := db.Series(k.String(), k)
		ids[k] = id
		want[k] = norm(randomSamples(rng, k, 5000))
		for _, s := range want[k] {
			if err := db.Append(id, &s); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(when string) {
		for k, id := range ids {
			w := want[k]
			sameSamples(t, when+" all", collect(t, db, id, math.MinInt64, math.MaxInt64, false), w)
			for range 30 {
				a, b := rng.IntN(len(w)), rng.IntN(len(w))
				a, b = min(a, b), max(a, b)
				sameSamples(t, fmt.Sprintf("%s %v %d..%d", when, k, a, b), collect(t, db, id, w[a].Time, w[b].Time, false), w[a:b+1])
				sameSamples(t, fmt.Sprintf("%s %v reverse %d..%d", when, k, a, b), collect(t, db, id, w[a].Time, w[b].Time, true), reversed(w[a:b+1]))
			}
		}
	}
	check("head")
	db.Tick()
	db.mu.Lock()
	db.closed = true // a power cut: the head comes back from the log
	db.mu.Unlock()
	db = mustOpen(t, dir, testOpts(nil))
	check("replayed")
	if err := db.Cut(); err != nil {
		t.Fatal(err)
	}
	check("block")
	db.Close()
}

// BenchmarkScanRecent: a scan of the last second of a long head decodes a
// frame or two, not the whole chunk.
func BenchmarkScanRecent(b *testing.B) {
	db := mustOpen(b, b.TempDir(), testOpts(nil))
	defer db.Close()
	id, _ := db.Series("c", Int)
	base := int64(1_700_000_000) * 1e9
	for i := range 200_000 {
		s := Sample{Time: base + int64(i)*5e6, Value: uint64(i)}
		db.Append(id, &s)
	}
	end := base + 199_999*5e6
	b.ResetTimer()
	for range b.N {
		n := 0
		db.Scan(id, end-int64(time.Second), end, false, 0, func(*Sample) bool { n++; return true })
		if n != 201 {
			b.Fatalf("%d", n)
		}
	}
}

// BenchmarkAppendBytes: 1 KiB Bytes samples into one series (an event
// history's records), with the flushes and cuts they bring.
func BenchmarkAppendBytes(b *testing.B) {
	db := mustOpen(b, b.TempDir(), testOpts(nil))
	defer db.Close()
	id, _ := db.Series("events", Bytes)
	rec := make([]byte, 1024)
	for i := range rec {
		rec[i] = byte(i * 7)
	}
	tm := int64(1_700_000_000) * 1e9
	b.ReportAllocs()
	b.SetBytes(int64(len(rec)))
	for i := 0; b.Loop(); i++ {
		tm += 5e5 // 2,000 a second
		rec[0] = byte(i)
		db.Append(id, &Sample{Time: tm, Bytes: rec})
		if i%2000 == 1999 {
			db.Tick()
		}
	}
}
