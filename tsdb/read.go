package tsdb

import (
	"fmt"
	"os"
	"sort"
	"sync"
)

// scan is the reused state of one Scan.
type scan struct {
	db       *DB
	id       SeriesID
	kind     Kind
	from, to int64
	reverse  bool
	fn       func(*Sample) bool
	last     int64 // the time of the last sample visited
	seen     bool
	head     []byte
	chunk    []byte
	headFr   []frame
	chunkFr  []frame
	d        decoder
	s        Sample
	rev      []Sample
	arena    []byte
}

var scans = sync.Pool{New: func() any { return new(scan) }}

// Scan calls fn with the samples of series id from from to to (Unix ns,
// both included) in time order, or newest first with reverse, until fn
// returns false. The sample and its Bytes are valid during the call only.
// Samples past the series' own bounds (SetRetention) are not read. A
// chunk that cannot be read (a checksum fails) is logged and stands in
// the scan as one sample without a value and with status lost; the scan
// goes on.
func (db *DB) Scan(id SeriesID, from, to int64, reverse bool, lost uint32, fn func(*Sample) bool) error {
	sc := scans.Get().(*scan)
	defer func() {
		sc.fn, sc.db = nil, nil
		clear(sc.rev)
		sc.rev = sc.rev[:0]
		scans.Put(sc)
	}()
	*sc = scan{head: sc.head[:0], chunk: sc.chunk, d: sc.d, rev: sc.rev[:0], arena: sc.arena[:0],
		headFr: sc.headFr[:0], chunkFr: sc.chunkFr[:0]}
	sc.db, sc.id, sc.from, sc.to, sc.reverse, sc.fn = db, id, from, to, reverse, fn
	db.mu.Lock()
	if int(id) >= len(db.series) {
		db.mu.Unlock()
		return fmt.Errorf("tsdb: no series %d", id)
	}
	se := db.series[id]
	sc.kind = se.kind
	blocks := db.blocks
	var cold, head encoderView
	if db.cold != nil {
		cold = db.cold.view(int(id)) // not changed after the cut: read in place
	}
	if se.head.n > 0 {
		sc.head = append(sc.head, se.head.w.b...)
		sc.headFr = append(sc.headFr, se.head.frames...)
		head = encoderView{n: se.head.n, minT: se.head.minT, maxT: se.head.maxT, frames: sc.headFr, stream: sc.head}
	}
	db.mu.Unlock()
	if c := db.cutoff(id, db.opt.Now().UnixNano()); c > sc.from {
		sc.from = c
	}
	if sc.from > sc.to {
		return nil
	}
	if !reverse {
		for _, b := range blocks {
			if !sc.block(b, lost) {
				return nil
			}
		}
		if !sc.chunkOf(cold) || !sc.chunkOf(head) {
			return nil
		}
		return nil
	}
	if !sc.chunkOf(head) || !sc.chunkOf(cold) {
		return nil
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		if !sc.block(blocks[i], lost) {
			return nil
		}
	}
	return nil
}

// encoderView is a chunk: of the head or the cold generation, copied, or
// of a block.
type encoderView struct {
	n          int
	minT, maxT int64
	frames     []frame
	stream     []byte
}

// overlaps reports whether ticks [minT, maxT] meet the scan's range.
func (sc *scan) overlaps(minT, maxT int64) bool {
	return maxT*Resolution >= sc.from && minT*Resolution <= sc.to
}

// block visits the series' chunk in b; false when the scan is over.
func (sc *scan) block(b *block, lost uint32) bool {
	if !sc.overlaps(b.minT, b.maxT) {
		return true
	}
	f, err := os.Open(b.path)
	if err != nil {
		return true // removed by retention meanwhile
	}
	ci, ok, err := b.readChunk(f, sc.id, &sc.chunk, sc.chunkFr)
	f.Close()
	if err != nil {
		sc.db.log.Error("history: "+err.Error()+": its samples are reported lost", "series", sc.id)
		// One sample without a value stands for what the chunk held, at a
		// time in the range and in the scan's order.
		var t int64
		if !sc.reverse {
			t = max(sc.from, b.minT*Resolution)
			if sc.seen {
				t = max(t, sc.last+Resolution)
			}
		} else {
			t = min(sc.to, b.maxT*Resolution)
			if sc.seen {
				t = min(t, sc.last-Resolution)
			}
		}
		if t < sc.from || t > sc.to {
			return true
		}
		sc.s = Sample{Time: t, NoValue: true, Status: lost}
		return sc.visit(&sc.s)
	}
	if !ok {
		return true
	}
	if ci.kind != sc.kind {
		return true // the series' kind is in the series file; a chunk of another is not its own
	}
	sc.chunkFr = ci.frames
	return sc.chunkOf(encoderView{n: ci.n, minT: ci.minT, maxT: ci.maxT, frames: ci.frames, stream: ci.stream})
}

// chunkOf visits the samples of c in the range; false when the scan is
// over. It decodes from the frame that holds the range's start (the end,
// going back), not from the chunk's first sample.
func (sc *scan) chunkOf(c encoderView) bool {
	if c.n == 0 || !sc.overlaps(c.minT, c.maxT) || len(c.frames) == 0 {
		return true
	}
	d := &sc.d
	// The last frame that starts at or before t (ns); 0 when none does.
	frameOf := func(t int64) int {
		i := sort.Search(len(c.frames), func(i int) bool { return c.frames[i].t*Resolution > t })
		return max(i-1, 0)
	}
	if !sc.reverse {
		f := frameOf(sc.from)
		d.init(sc.kind, c.stream, c.n)
		d.seek(f, c.frames[f].off)
		for d.next(&sc.s) {
			if sc.s.Time < sc.from {
				continue
			}
			if sc.s.Time > sc.to || !sc.visit(&sc.s) {
				return false
			}
		}
		return sc.decoded(d)
	}
	for f := frameOf(sc.to); f >= 0; f-- {
		sc.rev, sc.arena = sc.rev[:0], sc.arena[:0]
		d.init(sc.kind, c.stream, min(c.n, (f+1)*frameSize))
		d.seek(f, c.frames[f].off)
		for d.next(&sc.s) {
			if sc.s.Time < sc.from {
				continue
			}
			if sc.s.Time > sc.to {
				break
			}
			s := sc.s
			if s.Bytes != nil {
				at := len(sc.arena)
				sc.arena = append(sc.arena, s.Bytes...)
				s.Bytes = sc.arena[at:len(sc.arena):len(sc.arena)]
			}
			sc.rev = append(sc.rev, s)
		}
		if !sc.decoded(d) {
			return false
		}
		for i := len(sc.rev) - 1; i >= 0; i-- {
			if !sc.visit(&sc.rev[i]) {
				return false
			}
		}
		if c.frames[f].t*Resolution < sc.from {
			return false // the frames before hold older samples only
		}
	}
	return c.minT*Resolution >= sc.from
}

// decoded checks a decoder at the end of its chunk.
func (sc *scan) decoded(d *decoder) bool {
	if d.err != nil {
		sc.db.log.Error("history: a chunk does not decode: the samples after its good ones are not read", "series", sc.id, "err", d.err)
	}
	return true
}

func (sc *scan) visit(s *Sample) bool {
	sc.last, sc.seen = s.Time, true
	return sc.fn(s)
}
