package tsdb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A block holds the chunks of one head generation (one log segment), a
// chunk per series, and an index to find them:
//
//	header   magic "EDTSBLK", format version
//	chunks   per series in id order, those with samples:
//	         [4] CRC-32C of the rest  [1] kind  uvarint samples
//	         varint first time  uvarint last − first (ticks)
//	         per frame after the first: uvarint its time − the last's,
//	         uvarint its byte − the last's  stream
//	index    per id from lo to hi: [4] where its chunk ends, counted
//	         from the first chunk (an empty chunk ends where the last did)
//	footer   [4] lo [4] hi [8] index offset [8] first [8] last time
//	         (ticks) [8] samples [8] last flush (Unix ns) [4] CRC-32C of
//	         the 48 bytes before [4] zero [8] magic "EDTSEND"
//
// A block is written to a temporary file, synced and renamed: it is whole
// or absent. A chunk's CRC is checked when the chunk is read.
const (
	blockMagic  = "EDTSBLK\x00"
	footerMagic = "EDTSEND\x00"
	footerSize  = 64
)

// block is a block file as the store knows it.
type block struct {
	seg        uint64
	path       string
	size       int64
	lo, hi     uint32
	indexOff   int64
	minT, maxT int64 // ticks
	samples    uint64
	alive      int64 // the last flush of its segment, Unix ns
}

// chunkSource is what writeBlock reads: the chunks by series id.
type chunkSource interface {
	numSeries() int
	chunk(id int) (kind Kind, c encoderView) // c.n 0: none
}

// writeBlock writes the block of segment seg from src into dir and
// returns it. buf is reused between calls.
func writeBlock(dir string, seg uint64, src chunkSource, alive int64, buf *[]byte) (*block, error) {
	path := filepath.Join(dir, blockName(seg))
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	b, err := fillBlock(f, seg, src, alive, buf)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	b.path = path
	return b, nil
}

func fillBlock(f *os.File, seg uint64, src chunkSource, alive int64, buf *[]byte) (*block, error) {
	w := bufio.NewWriterSize(f, 64<<10)
	w.Write(fileHeader(blockMagic))
	b := &block{seg: seg, alive: alive, minT: 1<<63 - 1, maxT: -1 << 63}
	n := src.numSeries()
	lo, hi := -1, -1
	for id := range n {
		if _, e := src.chunk(id); e.n > 0 {
			if lo < 0 {
				lo = id
			}
			hi = id + 1
		}
	}
	if lo < 0 {
		lo, hi = 0, 0
	}
	index := make([]byte, 0, 4*(hi-lo))
	var end uint32
	for id := lo; id < hi; id++ {
		kind, e := src.chunk(id)
		if e.n > 0 {
			c := (*buf)[:0]
			c = append(c, 0, 0, 0, 0, byte(kind))
			c = binary.AppendUvarint(c, uint64(e.n))
			c = binary.AppendVarint(c, e.minT)
			c = binary.AppendUvarint(c, uint64(e.maxT-e.minT))
			for k := 1; k < len(e.frames); k++ {
				c = binary.AppendUvarint(c, uint64(e.frames[k].t-e.frames[k-1].t))
				c = binary.AppendUvarint(c, uint64(e.frames[k].off-e.frames[k-1].off))
			}
			c = append(c, e.stream...)
			binary.LittleEndian.PutUint32(c, crc(c[4:]))
			*buf = c
			if _, err := w.Write(c); err != nil {
				return nil, err
			}
			end += uint32(len(c))
			b.minT, b.maxT = min(b.minT, e.minT), max(b.maxT, e.maxT)
			b.samples += uint64(e.n)
		}
		index = binary.LittleEndian.AppendUint32(index, end)
	}
	b.lo, b.hi = uint32(lo), uint32(hi)
	b.indexOff = headerSize + int64(end)
	if _, err := w.Write(index); err != nil {
		return nil, err
	}
	if _, err := w.Write(b.footer()); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	b.size = b.indexOff + int64(len(index)) + footerSize
	return b, nil
}

func (b *block) footer() []byte {
	ft := make([]byte, footerSize)
	binary.LittleEndian.PutUint32(ft[0:], b.lo)
	binary.LittleEndian.PutUint32(ft[4:], b.hi)
	binary.LittleEndian.PutUint64(ft[8:], uint64(b.indexOff))
	binary.LittleEndian.PutUint64(ft[16:], uint64(b.minT))
	binary.LittleEndian.PutUint64(ft[24:], uint64(b.maxT))
	binary.LittleEndian.PutUint64(ft[32:], b.samples)
	binary.LittleEndian.PutUint64(ft[40:], uint64(b.alive))
	binary.LittleEndian.PutUint32(ft[48:], crc(ft[:48]))
	copy(ft[56:], footerMagic)
	return ft
}

// errBlock wraps the errors of a block that cannot be read.
var errBlock = errors.New("unreadable block")

// openBlock reads the header and footer of block file path.
func openBlock(path string, seg uint64) (*block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < headerSize+footerSize {
		return nil, fmt.Errorf("%s: %d bytes is too short for a block: %w", path, size, errBlock)
	}
	h := make([]byte, headerSize)
	if _, err := f.ReadAt(h, 0); err != nil {
		return nil, err
	}
	if err := checkHeader(h, blockMagic); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, err, errBlock)
	}
	ft := make([]byte, footerSize)
	if _, err := f.ReadAt(ft, size-footerSize); err != nil {
		return nil, err
	}
	if string(ft[56:]) != footerMagic || crc(ft[:48]) != binary.LittleEndian.Uint32(ft[48:]) {
		return nil, fmt.Errorf("%s: the footer fails its checksum: %w", path, errBlock)
	}
	b := &block{
		seg: seg, path: path, size: size,
		lo: binary.LittleEndian.Uint32(ft[0:]), hi: binary.LittleEndian.Uint32(ft[4:]),
		indexOff: int64(binary.LittleEndian.Uint64(ft[8:])),
		minT:     int64(binary.LittleEndian.Uint64(ft[16:])), maxT: int64(binary.LittleEndian.Uint64(ft[24:])),
		samples: binary.LittleEndian.Uint64(ft[32:]), alive: int64(binary.LittleEndian.Uint64(ft[40:])),
	}
	if b.hi < b.lo || b.indexOff < headerSize || b.indexOff+4*int64(b.hi-b.lo)+footerSize != size {
		return nil, fmt.Errorf("%s: the footer does not match the file's size: %w", path, errBlock)
	}
	return b, nil
}

// chunkInfo is a chunk read from a block.
type chunkInfo struct {
	kind       Kind
	n          int
	minT, maxT int64
	frames     []frame
	stream     []byte
}

// readChunk reads series id's chunk from b (f open on b's file) into buf,
// its frames into frames; ok false when b has none.
func (b *block) readChunk(f *os.File, id SeriesID, buf *[]byte, frames []frame) (ci chunkInfo, ok bool, err error) {
	if uint32(id) < b.lo || uint32(id) >= b.hi {
		return ci, false, nil
	}
	i := int64(uint32(id) - b.lo)
	var ends [8]byte
	var start, end uint32
	if i == 0 {
		if _, err := f.ReadAt(ends[4:], b.indexOff); err != nil {
			return ci, false, err
		}
		end = binary.LittleEndian.Uint32(ends[4:])
	} else {
		if _, err := f.ReadAt(ends[:], b.indexOff+4*(i-1)); err != nil {
			return ci, false, err
		}
		start, end = binary.LittleEndian.Uint32(ends[:]), binary.LittleEndian.Uint32(ends[4:])
	}
	if end == start {
		return ci, false, nil
	}
	if end < start || headerSize+int64(end) > b.indexOff {
		return ci, false, fmt.Errorf("%s: the index of series %d is corrupt: %w", b.path, id, errBlock)
	}
	n := int(end - start)
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	c := (*buf)[:n]
	if _, err := f.ReadAt(c, headerSize+int64(start)); err != nil {
		return ci, false, err
	}
	if n < 5 || crc(c[4:]) != binary.LittleEndian.Uint32(c) {
		return ci, false, fmt.Errorf("%s: the chunk of series %d fails its checksum: %w", b.path, id, errBlock)
	}
	p := c[5:]
	cnt, k1 := binary.Uvarint(p)
	minT, k2 := binary.Varint(p[max(k1, 0):])
	if k1 <= 0 || k2 <= 0 {
		return ci, false, fmt.Errorf("%s: the chunk of series %d is corrupt: %w", b.path, id, errBlock)
	}
	span, k3 := binary.Uvarint(p[k1+k2:])
	if k3 <= 0 || cnt == 0 || cnt > uint64(len(p))*8 {
		return ci, false, fmt.Errorf("%s: the chunk of series %d is corrupt: %w", b.path, id, errBlock)
	}
	p = p[k1+k2+k3:]
	frames = append(frames[:0], frame{t: minT})
	for k := uint64(1); k < (cnt+frameSize-1)/frameSize; k++ {
		dt, n1 := binary.Uvarint(p)
		doff, n2 := binary.Uvarint(p[max(n1, 0):])
		if n1 <= 0 || n2 <= 0 {
			return ci, false, fmt.Errorf("%s: the frames of series %d are corrupt: %w", b.path, id, errBlock)
		}
		last := frames[len(frames)-1]
		frames = append(frames, frame{t: last.t + int64(dt), off: last.off + uint32(doff)})
		p = p[n1+n2:]
	}
	return chunkInfo{kind: Kind(c[4]), n: int(cnt), minT: minT, maxT: minT + int64(span), frames: frames, stream: p}, true, nil
}
