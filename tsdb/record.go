package tsdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Files of the store begin with an 8-byte magic and a 2-byte format
// version; records in the log files are framed as
//
//	[4] length of the payload, little-endian
//	[4] CRC-32C (Castagnoli) of the payload
//	[n] payload
//
// and a record that is cut short or fails its CRC ends what is read of
// the file (a torn tail: the last write before a power cut).

// FormatVersion is the version of the files this package writes and the
// newest it reads.
const FormatVersion = 2

const headerSize = 16 // magic, version, 6 bytes reserved

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// ErrFutureVersion is wrapped by the error of a file written by a newer
// version of the store.
var ErrFutureVersion = errors.New("written by a newer version")

// fileHeader returns the header of a file of magic.
func fileHeader(magic string) []byte {
	h := make([]byte, headerSize)
	copy(h, magic)
	binary.LittleEndian.PutUint16(h[8:], FormatVersion)
	return h
}

// checkHeader checks the header of a file of magic.
func checkHeader(h []byte, magic string) error {
	if len(h) < headerSize || string(h[:8]) != magic {
		return fmt.Errorf("not a %s file", magicName(magic))
	}
	if v := binary.LittleEndian.Uint16(h[8:]); v > FormatVersion {
		return fmt.Errorf("format version %d, this edged reads up to %d: %w", v, FormatVersion, ErrFutureVersion)
	} else if v == 0 {
		return fmt.Errorf("format version 0")
	}
	return nil
}

func magicName(m string) string {
	switch m {
	case walMagic:
		return "history log"
	case seriesMagic:
		return "history series"
	case blockMagic:
		return "history block"
	}
	return m
}

const maxRecord = 64 << 20

// appendRecord frames payload at the end of b.
func appendRecord(b, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc(payload))
	return append(b, payload...)
}

// recordReader reads the records of a log file after its header.
type recordReader struct {
	r   io.ReaderAt
	off int64 // of the next record
	end int64 // the file's size
	buf []byte
}

// errTorn is next's error for a record cut short or failing its CRC.
var errTorn = errors.New("torn record")

// next returns the next record's payload (valid until the next call),
// io.EOF at the end, errTorn for a bad record at r.off.
func (rr *recordReader) next() ([]byte, error) {
	if rr.off == rr.end {
		return nil, io.EOF
	}
	if rr.end-rr.off < 8 {
		return nil, errTorn
	}
	var h [8]byte
	if _, err := rr.r.ReadAt(h[:], rr.off); err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(h[:]))
	if n > maxRecord || rr.end-rr.off-8 < n {
		return nil, errTorn
	}
	if int64(cap(rr.buf)) < n {
		rr.buf = make([]byte, n)
	}
	p := rr.buf[:n]
	if _, err := rr.r.ReadAt(p, rr.off+8); err != nil {
		return nil, err
	}
	if crc(p) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, errTorn
	}
	rr.off += 8 + n
	return p, nil
}
