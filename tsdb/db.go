package tsdb

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Options configure a store. Zero values take the defaults named.
type Options struct {
	// FlushInterval is how often appended samples are written to the log
	// and synced (default 1 s): at most this much is lost at a power cut.
	FlushInterval time.Duration
	// BlockSpan is the longest time the head collects samples before they
	// become a block (default 15 min).
	BlockSpan time.Duration
	// HeadBytes is the size of the head (the chunks in memory) at which
	// it becomes a block (default 1 MiB). Appends fail with ErrFull once
	// the head holds four times this, which happens only while blocks
	// cannot be written.
	HeadBytes int
	// MaxAge and MaxBytes, when above 0, bound what the store keeps: the
	// oldest blocks are removed first.
	MaxAge   time.Duration
	MaxBytes int64
	// Reserve is the space left free on the store's file system for
	// everything else (default 32 MiB): the oldest blocks are removed to
	// keep it, and with none left to remove the store pauses. Negative:
	// none.
	Reserve int64
	// Logger gets what the store did on its own: a torn tail cut off, a
	// block it cannot read, a pause. Nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Released, when not nil, is called after the store let go of much
	// memory: a cut's copy of the head (HeadBytes or so), once its block
	// is written. The process may give it back to the system.
	Released func()
}

func (o *Options) defaults() {
	if o.FlushInterval <= 0 {
		o.FlushInterval = time.Second
	}
	if o.BlockSpan <= 0 {
		o.BlockSpan = 15 * time.Minute
	}
	if o.HeadBytes <= 0 {
		o.HeadBytes = 1 << 20
	}
	if o.Reserve == 0 {
		o.Reserve = 32 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Errors of Append.
var (
	// ErrFull: the head is full because blocks cannot be written (see
	// Stats.Paused); the sample is dropped.
	ErrFull = errors.New("tsdb: history paused, the sample is dropped")
	// ErrOutOfOrder: the sample is not after the series' last one.
	ErrOutOfOrder = errors.New("tsdb: sample not after the series' last")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("tsdb: closed")
)

// DB is a store of time series in a folder of its own: a write-ahead log,
// the head (each series' newest samples, compressed, in memory) and
// immutable blocks, each cut from one generation of the head. Its methods
// are safe to call from any goroutine.
type DB struct {
	dir string
	opt Options
	log *slog.Logger

	regMu sync.Mutex // the series file
	reg   *os.File

	mu        sync.Mutex
	series    []*series
	byKey     map[seriesKey]SeriesID
	dirty     []uint64 // bitmap by id: series with bits not yet flushed
	headBytes int
	headStart int64    // Unix ns of the first flush of the current generation's samples; 0: none
	cold      *coldGen // the last generation, until its block is written
	blocks    []*block // by segment; replaced, never changed in place
	gen       uint64   // counts changes of blocks
	paused    string
	closed    bool
	st        Stats

	// Of the flusher's rounds (flushMu), Open and Close.
	flushMu   sync.Mutex
	wal       *walFile
	walEnc    walEncoder
	inRecord  []SeriesID
	payload   []byte
	record    []byte
	blockBuf  []byte
	lastWrite int64
	lastAlive int64
	nextRetry int64

	quit  chan struct{}
	done  chan struct{}
	reset chan time.Duration // a new flush interval
}

// series is a series' state.
type series struct {
	kind      Kind
	lastKnown bool
	head      encoder
	flushed   int        // bits of head in the log (or in the record being written)
	durable   int        // bits of head in the log, synced
	lastT     int64      // ticks of the last sample; valid with lastKnown
	ret       *retention // nil: none but the store's
}

// coldGen is the head of the last cut, copied into one allocation, until
// its block is written: the heads keep their buffers for the next
// generation, and the copy is garbage once the block is on flash. It is
// not changed after the cut.
type coldGen struct {
	seg    uint64
	stream []byte
	frames []frame
	chunks []coldChunk // by series id
}

// coldChunk is where a series' chunk is in a coldGen.
type coldChunk struct {
	minT, maxT int64 // ticks
	n          uint32
	off, end   uint32
	fOff, fEnd uint32
	kind       Kind
}

// newColdGen copies the heads of series into a coldGen of segment seg.
func newColdGen(seg uint64, series []*series) *coldGen {
	var nb, nf int
	for _, se := range series {
		nb += len(se.head.w.b)
		nf += len(se.head.frames)
	}
	g := &coldGen{seg: seg, stream: make([]byte, 0, nb), frames: make([]frame, 0, nf), chunks: make([]coldChunk, len(series))}
	for id, se := range series {
		h := &se.head
		if h.n == 0 {
			continue
		}
		g.chunks[id] = coldChunk{n: uint32(h.n), minT: h.minT, maxT: h.maxT, off: uint32(len(g.stream)), fOff: uint32(len(g.frames)), kind: se.kind}
		g.stream = append(g.stream, h.w.b...)
		g.frames = append(g.frames, h.frames...)
		g.chunks[id].end, g.chunks[id].fEnd = uint32(len(g.stream)), uint32(len(g.frames))
	}
	return g
}

// view returns series id's chunk (n 0: none).
func (g *coldGen) view(id int) encoderView {
	if id >= len(g.chunks) || g.chunks[id].n == 0 {
		return encoderView{}
	}
	c := &g.chunks[id]
	return encoderView{n: int(c.n), minT: c.minT, maxT: c.maxT, frames: g.frames[c.fOff:c.fEnd:c.fEnd], stream: g.stream[c.off:c.end:c.end]}
}

// retention is a series' own bounds (SetRetention).
type retention struct {
	age       time.Duration
	bytes     int64
	cutoff    int64 // ns; valid for gen cutoffGen+1
	cutoffGen uint64
}

// Stats are a store's figures since Open.
type Stats struct {
	Series     int
	Blocks     int
	Unreadable int   // block files that could not be read, left in place
	Bytes      int64 // blocks and log on disk
	BlockBytes int64 // of them, the blocks'
	// BlockSamples are the samples in the blocks: BlockBytes/BlockSamples
	// is what a sample costs once the log is cut into blocks.
	BlockSamples uint64
	HeadBytes    int
	Oldest       int64  // Unix ns of the oldest sample kept; 0 for none
	Appended     uint64 // samples
	Dropped      uint64 // samples refused with ErrFull
	OutOfOrder   uint64
	Written      uint64 // bytes written to the log and blocks
	Writes       uint64 // write calls for them
	Blocked      uint64 // blocks written
	Flushes      uint64
	LastFlush    time.Duration // how long the last flush took
	Paused       string        // why the store is paused, "" when it is not
}

// Open opens the store in dir, creating the folder if needed. It replays
// the log: each segment without its block becomes one (the head of the
// last becomes the head), torn tails are cut off and reported to the
// logger. A block file that cannot be read (a checksum fails, a newer
// format) is reported and left alone; the rest stays readable.
func Open(dir string, opt Options) (*DB, error) {
	opt.defaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	db := &DB{dir: dir, opt: opt, log: opt.Logger, byKey: map[seriesKey]SeriesID{},
		quit: make(chan struct{}), done: make(chan struct{}), reset: make(chan time.Duration, 1)}
	note := func(s string) { db.log.Warn("history: " + s) }
	reg, keys, err := openSeries(dir, note)
	if err != nil {
		return nil, err
	}
	db.reg = reg
	for i, k := range keys {
		db.addSeries(SeriesID(i), k)
	}
	if err := db.openBlocks(note); err != nil {
		reg.Close()
		return nil, err
	}
	if err := db.replay(note); err != nil {
		reg.Close()
		return nil, err
	}
	db.walEnc.reset()
	go db.run(opt.FlushInterval)
	return db, nil
}

func (db *DB) addSeries(id SeriesID, k seriesKey) *series {
	se := &series{kind: k.kind}
	se.head.reset(k.kind)
	db.series = append(db.series, se)
	db.byKey[k] = id
	if w := int(id) / 64; w >= len(db.dirty) {
		db.dirty = append(db.dirty, make([]uint64, w+1-len(db.dirty))...)
	}
	return se
}

// keyOf returns series id's key (for messages: it searches).
func (db *DB) keyOf(id SeriesID) string {
	for k, i := range db.byKey {
		if i == id {
			return k.key
		}
	}
	return ""
}

// openBlocks reads the footers of the block files and removes the
// temporary files of a block write that did not finish.
func (db *DB) openBlocks(note func(string)) error {
	if tmps, _ := filepath.Glob(filepath.Join(db.dir, blockPrefix+"*"+blockSuffix+".tmp")); len(tmps) > 0 {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	segs, err := segmentsIn(db.dir, blockPrefix, blockSuffix)
	if err != nil {
		return err
	}
	for _, s := range segs {
		path := filepath.Join(db.dir, blockName(s))
		b, err := openBlock(path, s)
		if err != nil {
			note(fmt.Sprintf("%v: the block is left in place and not read; the others are", err))
			db.st.Unreadable++
			continue
		}
		db.blocks = append(db.blocks, b)
		db.lastAlive = max(db.lastAlive, b.alive)
	}
	return nil
}

// replay replays the log segments that have no block yet.
func (db *DB) replay(note func(string)) error {
	segs, err := segmentsIn(db.dir, walPrefix, walSuffix)
	if err != nil {
		return err
	}
	var done uint64 // segments below it have their block
	if n := len(db.blocks); n > 0 {
		done = db.blocks[n-1].seg + 1
	}
	var pending []uint64
	for _, s := range segs {
		if s < done {
			os.Remove(filepath.Join(db.dir, walName(s))) // its block was written
			continue
		}
		pending = append(pending, s)
	}
	for i, s := range pending {
		path := filepath.Join(db.dir, walName(s))
		last, closed, size, err := replayWAL(path, true, note, db.replayEntry)
		if err != nil {
			if errors.Is(err, ErrFutureVersion) {
				return err // written by a newer edged: not to be cut or removed
			}
			return fmt.Errorf("history: %w", err)
		}
		if last > db.lastAlive {
			db.lastAlive = last
		}
		_ = closed
		if err := db.rebuildHeads(note); err != nil {
			return err
		}
		if i < len(pending)-1 {
			// An older generation whose block was not written: write it
			// now, from the head it replayed into.
			if err := db.writeHeadBlock(s); err != nil {
				return fmt.Errorf("history: writing the block of %s: %w", path, err)
			}
			os.Remove(path)
			continue
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		db.wal = &walFile{seg: s, f: f, size: size}
	}
	if db.wal == nil {
		w, err := createWAL(db.dir, done)
		if err != nil {
			return err
		}
		db.wal = w
	}
	if db.headBytes > 0 {
		// The generation's age before the stop is not known: it counts
		// from the last record.
		db.headStart = db.lastAlive
	}
	return nil
}

func (db *DB) replayEntry(id SeriesID, stream []byte, from, to int) error {
	if int(id) >= len(db.series) {
		return fmt.Errorf("series %d does not exist", id)
	}
	db.series[id].head.w.copyBits(stream, from, to)
	return nil
}

// rebuildHeads decodes each head's replayed stream to restore its
// encoder's state; a stream that does not decode to its end is cut to the
// samples that do.
func (db *DB) rebuildHeads(note func(string)) error {
	var d decoder
	var s Sample
	for id, se := range db.series {
		e := &se.head
		if e.w.n == 0 || e.n > 0 {
			continue
		}
		d.initBits(e.kind, e.w.b, e.w.n)
		good, n := 0, 0
		var first int64
		e.frames = e.frames[:0]
		for {
			at := (d.r.pos + 7) / 8
			if !d.next(&s) {
				break
			}
			if n%frameSize == 0 {
				e.frames = append(e.frames, frame{t: d.t, off: uint32(at)})
			}
			if n == 0 {
				first = d.t
			}
			n++
			good = d.r.pos
		}
		if d.err != nil || good != e.w.n {
			note(fmt.Sprintf("series %d (%s): the log's samples decode to bit %d of %d: cut there", id, db.keyOf(SeriesID(id)), good, e.w.n))
			cut := e.w.b[:(good+7)/8]
			if good%8 != 0 {
				cut[len(cut)-1] &= byte(0xff << uint(8-good%8))
			}
			e.w.b, e.w.n = cut, good
			if n == 0 {
				e.reset(e.kind)
				continue
			}
			// decode again up to the cut for the state
			d.initBits(e.kind, e.w.b, e.w.n)
			for d.next(&s) {
			}
			e.frames = e.frames[:(n+frameSize-1)/frameSize]
		}
		e.codec = d.codec
		e.codec.last = append([]byte(nil), d.last...)
		e.minT, e.maxT = first, d.t
		se.lastT, se.lastKnown = d.t, true
		se.flushed, se.durable = e.w.n, e.w.n
		db.headBytes += len(e.w.b)
	}
	return nil
}

// headSource writes the head as a block (at Open).
type headSource struct{ db *DB }

func (h headSource) numSeries() int { return len(h.db.series) }
func (h headSource) chunk(id int) (Kind, encoderView) {
	se := h.db.series[id]
	return se.kind, se.head.view()
}

func (g *coldGen) numSeries() int { return len(g.chunks) }
func (g *coldGen) chunk(id int) (Kind, encoderView) {
	if id >= len(g.chunks) {
		return 0, encoderView{}
	}
	return g.chunks[id].kind, g.view(id)
}

// writeHeadBlock writes the head as the block of segment seg and empties
// it (at Open).
func (db *DB) writeHeadBlock(seg uint64) error {
	b, err := writeBlock(db.dir, seg, headSource{db}, db.lastAlive, &db.blockBuf)
	if err != nil {
		return err
	}
	db.blocks = append(db.blocks, b)
	for _, se := range db.series {
		se.head.reset(se.kind)
		se.flushed, se.durable = 0, 0
	}
	db.headBytes = 0
	return nil
}

// Series returns the id of the series key of kind, making it if there is
// none: a key has one series per kind.
func (db *DB) Series(key string, kind Kind) (SeriesID, error) {
	if !kind.valid() {
		return 0, fmt.Errorf("tsdb: series %q: kind %d", key, kind)
	}
	if len(key) > maxKey {
		return 0, fmt.Errorf("tsdb: series key of %d bytes, at most %d", len(key), maxKey)
	}
	k := seriesKey{key, kind}
	db.mu.Lock()
	id, ok := db.byKey[k]
	closed := db.closed
	db.mu.Unlock()
	if closed {
		return 0, ErrClosed
	}
	if ok {
		db.knowLast(id)
		return id, nil
	}
	db.regMu.Lock()
	defer db.regMu.Unlock()
	db.mu.Lock()
	if id, ok := db.byKey[k]; ok {
		db.mu.Unlock()
		return id, nil
	}
	id = SeriesID(len(db.series))
	db.mu.Unlock()
	fi, err := db.reg.Stat()
	if err != nil {
		return 0, err
	}
	if err := appendSeries(db.reg, id, k); err != nil {
		db.reg.Truncate(fi.Size())
		return 0, fmt.Errorf("tsdb: recording series %q: %w", key, err)
	}
	db.mu.Lock()
	se := db.addSeries(id, k)
	se.lastKnown = true
	se.lastT = math.MinInt64
	db.mu.Unlock()
	return id, nil
}

// knowLast finds the time of series id's last sample in the blocks, once.
func (db *DB) knowLast(id SeriesID) {
	db.mu.Lock()
	se := db.series[id]
	known := se.lastKnown
	blocks := db.blocks
	db.mu.Unlock()
	if known {
		return
	}
	last := int64(math.MinInt64)
	var buf []byte
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		f, err := os.Open(b.path)
		if err != nil {
			continue
		}
		ci, ok, err := b.readChunk(f, id, &buf, nil)
		f.Close()
		if err == nil && ok {
			last = ci.maxT
			break
		}
	}
	db.mu.Lock()
	if !se.lastKnown {
		se.lastT, se.lastKnown = max(se.lastT, last), true
	}
	db.mu.Unlock()
}

// SetRetention bounds what is read of series id to the last maxAge and
// the newest maxBytes of its blocks (0: no bound beyond the store's).
// The space is given back when every series in a block is past its
// bound, or by the store's own bounds.
func (db *DB) SetRetention(id SeriesID, maxAge time.Duration, maxBytes int64) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if int(id) < len(db.series) {
		se := db.series[id]
		se.ret = nil
		if maxAge > 0 || maxBytes > 0 {
			se.ret = &retention{age: maxAge, bytes: maxBytes}
		}
	}
}

// Append appends s to series id. Samples of a series must come in time
// order: one not after the last (at Resolution) is ErrOutOfOrder. It never
// waits for the disk and, in the steady state, never allocates.
func (db *DB) Append(id SeriesID, s *Sample) error {
	t := toTicks(s.Time)
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return ErrClosed
	}
	if int(id) >= len(db.series) {
		db.mu.Unlock()
		return fmt.Errorf("tsdb: no series %d", id)
	}
	se := db.series[id]
	if se.kind == Bytes && len(s.Bytes) > MaxBytesValue && !s.NoValue {
		db.mu.Unlock()
		return fmt.Errorf("tsdb: a value of %d bytes, at most %d", len(s.Bytes), MaxBytesValue)
	}
	switch {
	case se.lastKnown && t <= se.lastT:
		db.st.OutOfOrder++
		db.mu.Unlock()
		return ErrOutOfOrder
	case db.headBytes >= 4*db.opt.HeadBytes:
		db.st.Dropped++
		db.mu.Unlock()
		return ErrFull
	}
	before := len(se.head.w.b)
	se.head.append(s, t)
	db.headBytes += len(se.head.w.b) - before
	se.lastT, se.lastKnown = t, true
	db.dirty[id/64] |= 1 << (id % 64)
	db.st.Appended++
	db.mu.Unlock()
	return nil
}

// Configure changes the bounds and the flush interval of a running store
// (the other options stay as Open had them); zero values take the
// defaults as at Open.
func (db *DB) Configure(o Options) {
	o.defaults()
	db.mu.Lock()
	db.opt.MaxAge, db.opt.MaxBytes, db.opt.Reserve = o.MaxAge, o.MaxBytes, o.Reserve
	changed := db.opt.FlushInterval != o.FlushInterval
	db.opt.FlushInterval = o.FlushInterval
	db.mu.Unlock()
	if changed {
		select {
		case db.reset <- o.FlushInterval:
		default:
		}
	}
}

// bounds returns the options the flusher reads as it goes.
func (db *DB) bounds() (maxAge time.Duration, maxBytes, reserve int64) {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.opt.MaxAge, db.opt.MaxBytes, db.opt.Reserve
}

// LastAlive returns the time of the last flush or close the store
// recorded before this Open (Unix ns; 0 for a new store): until then it
// was writing, after it nothing was recorded.
func (db *DB) LastAlive() int64 { return db.lastAlive }

// Stats fills st.
func (db *DB) Stats(st *Stats) {
	db.mu.Lock()
	defer db.mu.Unlock()
	*st = db.st
	st.Series = len(db.series)
	st.Blocks = len(db.blocks)
	st.HeadBytes = db.headBytes
	st.Paused = db.paused
	for _, b := range db.blocks {
		st.BlockBytes += b.size
		st.BlockSamples += b.samples
	}
	st.Bytes = st.BlockBytes
	if db.wal != nil {
		st.Bytes += db.wal.size
	}
	if len(db.blocks) > 0 {
		st.Oldest = db.blocks[0].minT * Resolution
	}
}

// Close writes what was appended to the log and a close record, and
// closes the files. The head stays in the log for the next Open.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return ErrClosed
	}
	db.mu.Unlock()
	close(db.quit)
	<-db.done
	db.mu.Lock()
	db.closed = true
	db.mu.Unlock()
	db.flushMu.Lock()
	defer db.flushMu.Unlock()
	err := db.flush(db.opt.Now().UnixNano(), true)
	if db.wal != nil {
		if cerr := db.wal.f.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := db.reg.Close(); err == nil {
		err = cerr
	}
	return err
}

// run is the flusher: every FlushInterval it writes the log, cuts a block
// when the head is due, and keeps the bounds.
func (db *DB) run(every time.Duration) {
	defer close(db.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-db.quit:
			return
		case d := <-db.reset:
			t.Reset(d)
		case <-t.C:
			db.tick()
		}
	}
}

// Flush runs a round of the flusher now: what was appended goes to the
// log, a block is cut when the head is due, the bounds are kept.
func (db *DB) Flush() {
	db.tick()
}

// tick is one round of the flusher (serialized by flushMu).
func (db *DB) tick() {
	db.flushMu.Lock()
	defer db.flushMu.Unlock()
	now := db.opt.Now().UnixNano()
	start := time.Now()
	err := db.flush(now, false)
	db.mu.Lock()
	db.st.Flushes++
	db.st.LastFlush = time.Since(start)
	coldPending := db.cold != nil
	due := db.headBytes >= db.opt.HeadBytes || db.headStart != 0 && now-db.headStart >= int64(db.opt.BlockSpan)
	db.mu.Unlock()
	if err == nil && coldPending && now >= db.nextRetry {
		err = db.writeCold()
	}
	if err == nil && due && !coldPending {
		err = db.cut(now)
	}
	db.retain(now, err)
}

// flush writes the bits appended since the last flush to the log, as one
// record; with final it writes a close record too. After an error the bits
// go again with the next flush.
func (db *DB) flush(now int64, final bool) error {
	db.mu.Lock()
	db.collect()
	n := db.walEnc.entries
	if n > 0 && db.headStart == 0 {
		db.headStart = now
	}
	db.mu.Unlock()
	var rec []byte
	if n > 0 || now-db.lastWrite >= int64(10*time.Second) {
		db.payload = db.walEnc.payload(db.payload, now)
		rec = appendRecord(db.record[:0], db.payload)
	}
	if final {
		db.payload = closePayload(db.payload, now)
		rec = appendRecord(rec, db.payload)
	}
	var err error
	if len(rec) > 0 {
		db.record = rec
		if err = db.spaceFor(int64(len(rec))); err == nil {
			err = db.wal.write(rec)
		}
	}
	db.mu.Lock()
	for _, id := range db.inRecord {
		se := db.series[id]
		if err == nil {
			se.durable = se.flushed
		} else {
			se.flushed = se.durable
			db.dirty[id/64] |= 1 << (id % 64)
		}
	}
	db.inRecord = db.inRecord[:0]
	if err == nil && len(rec) > 0 {
		db.st.Written += uint64(len(rec))
		db.st.Writes++
		db.lastWrite = now
	}
	db.mu.Unlock()
	db.walEnc.reset()
	if err != nil {
		return db.pause("writing the history log", err)
	}
	return nil
}

// collect puts the bits of the dirty series into the log encoder
// (db.mu held).
func (db *DB) collect() {
	for w, word := range db.dirty {
		for word != 0 {
			i := bits.TrailingZeros64(word)
			word &= word - 1
			id := SeriesID(w*64 + i)
			se := db.series[id]
			if se.head.w.n > se.flushed {
				db.walEnc.add(id, se.head.w.b, se.flushed, se.head.w.n)
				se.flushed = se.head.w.n
				db.inRecord = append(db.inRecord, id)
			}
		}
		db.dirty[w] = 0
	}
}

// cut makes the head the cold generation, starts the next log segment,
// and writes the cold generation's block.
func (db *DB) cut(now int64) error {
	next, err := createWAL(db.dir, db.wal.seg+1)
	if err != nil {
		return db.pause("starting a history log segment", err)
	}
	db.mu.Lock()
	db.collect() // what came since the flush, for the old segment
	db.cold = newColdGen(db.wal.seg, db.series)
	for _, se := range db.series {
		se.head.reset(se.kind)
		se.flushed, se.durable = 0, 0
	}
	db.inRecord = db.inRecord[:0]
	db.headBytes, db.headStart = 0, 0
	old := db.wal
	db.wal = next
	db.mu.Unlock()
	if db.walEnc.entries > 0 {
		db.payload = db.walEnc.payload(db.payload, now)
		if err := old.write(appendRecord(db.record[:0], db.payload)); err == nil {
			db.lastAlive = now
		}
		db.walEnc.reset()
	}
	old.f.Close()
	return db.writeCold()
}

// writeCold writes the cold generation's block, then forgets the
// generation and removes its log segment.
func (db *DB) writeCold() error {
	cold := db.cold // only the flusher changes it
	if err := db.spaceFor(int64(len(cold.stream)) + 4*int64(len(cold.chunks)) + footerSize); err != nil {
		db.nextRetry = db.opt.Now().UnixNano() + int64(10*time.Second)
		return db.pause("writing a history block", err)
	}
	b, err := writeBlock(db.dir, cold.seg, cold, db.opt.Now().UnixNano(), &db.blockBuf)
	if err != nil {
		db.nextRetry = db.opt.Now().UnixNano() + int64(10*time.Second)
		return db.pause("writing a history block", err)
	}
	db.mu.Lock()
	db.blocks = append(db.blocks[:len(db.blocks):len(db.blocks)], b)
	db.gen++
	db.cold = nil
	db.st.Blocked++
	db.st.Written += uint64(b.size)
	db.st.Writes += uint64(b.size+64<<10-1) / (64 << 10)
	db.mu.Unlock()
	os.Remove(filepath.Join(db.dir, walName(cold.seg)))
	if db.opt.Released != nil {
		db.opt.Released()
	}
	return nil
}

// pause records why the store cannot write and returns err.
func (db *DB) pause(what string, err error) error {
	msg := fmt.Sprintf("%s: %v", what, err)
	db.mu.Lock()
	was := db.paused
	db.paused = msg
	db.mu.Unlock()
	if was == "" {
		db.log.Error("history: paused: "+msg+"; samples stay in memory while they fit, then are dropped", "dir", db.dir)
	}
	return err
}

// resume clears a pause.
func (db *DB) resume() {
	db.mu.Lock()
	was := db.paused
	db.paused = ""
	db.mu.Unlock()
	if was != "" {
		db.log.Info("history: writing again", "dir", db.dir)
	}
}

// errNoSpace is spaceFor's error when the file system's free space would
// fall below the reserve.
var errNoSpace = errors.New("no space left above the reserve")

// spaceFor reports whether n more bytes leave the reserve free, removing
// the oldest blocks to make room.
func (db *DB) spaceFor(n int64) error {
	_, _, reserve := db.bounds()
	if reserve < 0 {
		return nil
	}
	for {
		free, ok := freeSpace(db.dir)
		if !ok || free-n >= reserve {
			return nil
		}
		if !db.dropOldest("to keep the reserve of free space") {
			return fmt.Errorf("%w: %d MiB free, %d MiB reserved", errNoSpace, free>>20, reserve>>20)
		}
	}
}

// retain removes the blocks past the store's bounds; with no error from
// the round it clears a pause.
func (db *DB) retain(now int64, roundErr error) {
	maxAge, maxBytes, _ := db.bounds()
	for {
		db.mu.Lock()
		var b *block
		var total int64
		for _, x := range db.blocks {
			total += x.size
		}
		if len(db.blocks) > 0 {
			b = db.blocks[0]
		}
		db.mu.Unlock()
		if b == nil {
			break
		}
		switch {
		case maxBytes > 0 && total > maxBytes:
			db.dropOldest("beyond the store's size bound")
			continue
		case maxAge > 0 && b.maxT*Resolution < now-int64(maxAge):
			db.dropOldest("beyond the store's age bound")
			continue
		case db.allHidden(b, now):
			db.dropOldest("every series in it is past its own bound")
			continue
		}
		break
	}
	if roundErr == nil {
		db.resume()
	}
}

// dropOldest removes the oldest block; false when there is none.
func (db *DB) dropOldest(why string) bool {
	db.mu.Lock()
	if len(db.blocks) == 0 {
		db.mu.Unlock()
		return false
	}
	b := db.blocks[0]
	db.blocks = append([]*block(nil), db.blocks[1:]...)
	db.gen++
	db.mu.Unlock()
	if err := os.Remove(b.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		db.log.Warn("history: removing a block", "file", b.path, "err", err)
	}
	db.log.Debug("history: block removed, "+why, "file", filepath.Base(b.path), "bytes", b.size)
	return true
}

// allHidden reports whether every series with samples in b has its own
// bound past b's newest sample.
func (db *DB) allHidden(b *block, now int64) bool {
	db.mu.Lock()
	any := false
	for id := b.lo; id < b.hi && int(id) < len(db.series); id++ {
		se := db.series[id]
		if se.ret != nil {
			any = true
			break
		}
	}
	db.mu.Unlock()
	if !any {
		return false
	}
	f, err := os.Open(b.path)
	if err != nil {
		return false
	}
	defer f.Close()
	var buf []byte
	var frames []frame
	for id := b.lo; id < b.hi; id++ {
		ci, ok, err := b.readChunk(f, SeriesID(id), &buf, frames)
		if err != nil {
			return false
		}
		if ok && db.cutoff(SeriesID(id), now) <= ci.maxT*Resolution {
			return false
		}
	}
	return true
}

// cutoff returns the time before which series id's samples are past its
// own bounds (math.MinInt64 for none).
func (db *DB) cutoff(id SeriesID, now int64) int64 {
	db.mu.Lock()
	if int(id) >= len(db.series) {
		db.mu.Unlock()
		return math.MinInt64
	}
	ret := db.series[id].ret
	if ret == nil {
		db.mu.Unlock()
		return math.MinInt64
	}
	if ret.cutoffGen == db.gen+1 && ret.bytes > 0 && ret.age <= 0 {
		c := ret.cutoff
		db.mu.Unlock()
		return c
	}
	se := db.series[id]
	age, maxBytes, gen := ret.age, ret.bytes, db.gen
	blocks := db.blocks
	used := int64(len(se.head.w.b))
	if db.cold != nil {
		used += int64(len(db.cold.view(int(id)).stream))
	}
	db.mu.Unlock()
	cut := int64(math.MinInt64)
	if age > 0 {
		cut = now - int64(age)
	}
	if maxBytes > 0 {
		var buf []byte
		for i := len(blocks) - 1; i >= 0 && used <= maxBytes; i-- {
			b := blocks[i]
			f, err := os.Open(b.path)
			if err != nil {
				continue
			}
			ci, ok, err := b.readChunk(f, id, &buf, nil)
			f.Close()
			if err != nil || !ok {
				continue
			}
			used += int64(len(ci.stream))
			if used > maxBytes {
				cut = max(cut, ci.maxT*Resolution+1)
			}
		}
	}
	if age <= 0 {
		db.mu.Lock()
		ret.cutoff, ret.cutoffGen = cut, gen+1
		db.mu.Unlock()
	}
	return cut
}
