package tsdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The write-ahead log: one file per segment, wal-<segment>.log. A segment
// holds the samples of one generation of the head: each series' chunk of
// that generation is the concatenation of the bits the segment's records
// carry for it, in order, so that replaying a segment gives back the
// chunks exactly, and the block cut from them replaces the segment.
//
// A data record's payload:
//
//	[1] 1  [8] time of the flush (Unix ns)  [4] entries
//	bits: per entry, the series id as a step from the last entry's, the
//	number of bits, the bits
//
// A close record ([1] 2 [8] time) says the store was closed then.
const (
	walMagic    = "EDTSWAL\x00"
	recData     = 1
	recClose    = 2
	walPrefix   = "wal-"
	walSuffix   = ".log"
	blockPrefix = "blk-"
	blockSuffix = ".tsb"
)

func walName(seg uint64) string   { return fmt.Sprintf("%s%016x%s", walPrefix, seg, walSuffix) }
func blockName(seg uint64) string { return fmt.Sprintf("%s%016x%s", blockPrefix, seg, blockSuffix) }

// segmentsIn returns the segment numbers of the files in dir named
// prefix<hex>suffix, in order.
func segmentsIn(dir, prefix, suffix string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []uint64
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, suffix) {
			continue
		}
		s, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(n, prefix), suffix), 16, 64)
		if err != nil {
			continue
		}
		segs = append(segs, s)
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i] < segs[j] })
	return segs, nil
}

// walEncoder builds a data record.
type walEncoder struct {
	w       bitWriter
	prev    int64 // the last entry's id
	entries uint32
}

func (e *walEncoder) reset() {
	e.w.reset()
	e.prev = -1
	e.entries = 0
}

// add adds the bits [from, to) of series id's stream.
func (e *walEncoder) add(id SeriesID, stream []byte, from, to int) {
	w := &e.w
	d := int64(id) - e.prev
	e.prev = int64(id)
	switch {
	case d == 1:
		w.write(0, 1)
	case d-2 < 1<<8:
		w.write(2, 2)
		w.write(uint64(d-2), 8)
	case d-2 < 1<<16:
		w.write(6, 3)
		w.write(uint64(d-2), 16)
	default:
		w.write(7, 3)
		w.write(uint64(d-2), 32)
	}
	n := to - from
	switch {
	case n < 1<<6:
		w.write(0, 1)
		w.write(uint64(n), 6)
	case n < 1<<12:
		w.write(2, 2)
		w.write(uint64(n), 12)
	default:
		w.write(3, 2)
		w.write(uint64(n), 32)
	}
	w.copyBits(stream, from, to)
	e.entries++
}

// payload returns the record's payload for a flush at now.
func (e *walEncoder) payload(buf []byte, now int64) []byte {
	buf = append(buf[:0], recData)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(now))
	buf = binary.LittleEndian.AppendUint32(buf, e.entries)
	return append(buf, e.w.b...)
}

func closePayload(buf []byte, now int64) []byte {
	buf = append(buf[:0], recClose)
	return binary.LittleEndian.AppendUint64(buf, uint64(now))
}

var errBadRecord = errors.New("malformed record")

// decodeWAL calls entry for each entry of data record p; entry gets the
// record's stream and the bit range of the entry's bits. It returns the
// record's time.
func decodeWAL(p []byte, entry func(id SeriesID, stream []byte, from, to int) error) (int64, error) {
	if len(p) < 9 {
		return 0, errBadRecord
	}
	t := int64(binary.LittleEndian.Uint64(p[1:]))
	switch p[0] {
	case recClose:
		return t, nil
	case recData:
	default:
		return 0, errBadRecord
	}
	if len(p) < 13 {
		return 0, errBadRecord
	}
	n := binary.LittleEndian.Uint32(p[9:])
	stream := p[13:]
	r := bitReader{b: stream}
	id := int64(-1)
	for range n {
		var d int64
		switch r.ones(3) {
		case 0:
			d = 1
		case 1:
			d = int64(r.read(8)) + 2
		case 2:
			d = int64(r.read(16)) + 2
		default:
			d = int64(r.read(32)) + 2
		}
		id += d
		var nb int
		switch r.ones(2) {
		case 0:
			nb = int(r.read(6))
		case 1:
			nb = int(r.read(12))
		default:
			nb = int(r.read(32))
		}
		if r.short || id > 1<<32-1 || nb > len(stream)*8-r.pos {
			return 0, errBadRecord
		}
		if err := entry(SeriesID(id), stream, r.pos, r.pos+nb); err != nil {
			return 0, err
		}
		r.pos += nb
	}
	return t, nil
}

// walFile is the open segment being appended to.
type walFile struct {
	seg  uint64
	f    *os.File
	size int64 // of what was written whole
}

func createWAL(dir string, seg uint64) (*walFile, error) {
	path := filepath.Join(dir, walName(seg))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(fileHeader(walMagic)); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return &walFile{seg: seg, f: f, size: headerSize}, syncDir(dir)
}

// write appends one framed record and syncs; on an error the file is cut
// back to what was whole before.
func (w *walFile) write(rec []byte) error {
	_, err := w.f.WriteAt(rec, w.size)
	if err == nil {
		err = w.f.Sync()
	}
	if err != nil {
		if terr := w.f.Truncate(w.size); terr != nil {
			return fmt.Errorf("%w (and cutting the log back: %v)", err, terr)
		}
		return err
	}
	w.size += int64(len(rec))
	return nil
}

// replayWAL reads segment file path: each data record's entries go to
// entry; a torn tail is cut off when cut is set, and reported to note. It
// returns the time of the last record (0 if none) and whether the last
// was a close record, and the size of what was read whole.
func replayWAL(path string, cut bool, note func(string), entry func(SeriesID, []byte, int, int) error) (last int64, closed bool, size int64, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, false, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false, 0, err
	}
	h := make([]byte, headerSize)
	if fi.Size() < headerSize {
		note(fmt.Sprintf("%s: %d bytes, no whole header: an empty log", path, fi.Size()))
		if cut {
			if err := f.Truncate(0); err == nil {
				_, err = f.WriteAt(fileHeader(walMagic), 0)
				if err == nil {
					err = f.Sync()
				}
			}
		}
		return 0, false, headerSize, err
	}
	if _, err := f.ReadAt(h, 0); err != nil {
		return 0, false, 0, err
	}
	if err := checkHeader(h, walMagic); err != nil {
		return 0, false, 0, fmt.Errorf("%s: %w", path, err)
	}
	if cut && binary.LittleEndian.Uint16(h[8:]) < FormatVersion {
		// The store appends to the segment what the older version may
		// not read (deltas): its header says so.
		if _, err := f.WriteAt(fileHeader(walMagic), 0); err != nil {
			return 0, false, 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, false, 0, err
		}
	}
	rr := recordReader{r: f, off: headerSize, end: fi.Size()}
	for {
		p, err := rr.next()
		if err == io.EOF {
			return last, closed, rr.off, nil
		}
		if errors.Is(err, errTorn) {
			note(fmt.Sprintf("%s: torn tail cut off at offset %d (%d bytes): the samples of the last flush before the stop", path, rr.off, rr.end-rr.off))
			if cut {
				if err := f.Truncate(rr.off); err != nil {
					return 0, false, 0, err
				}
				if err := f.Sync(); err != nil {
					return 0, false, 0, err
				}
			}
			return last, closed, rr.off, nil
		}
		if err != nil {
			return 0, false, 0, err
		}
		at := rr.off - 8 - int64(len(p))
		// Checked whole before any entry is applied.
		t, err := decodeWAL(p, func(SeriesID, []byte, int, int) error { return nil })
		if err == nil {
			_, err = decodeWAL(p, entry)
		}
		if err != nil {
			// A record whose CRC holds but that does not decode (or names
			// a series that does not exist) was not written by this
			// store: stop there, as at a torn tail.
			note(fmt.Sprintf("%s: record at offset %d: %v: cut off there with what follows", path, at, err))
			if cut {
				if err := f.Truncate(at); err != nil {
					return 0, false, 0, err
				}
			}
			return last, closed, at, nil
		}
		last, closed = t, p[0] == recClose
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
