package tsdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// The series file lists the series by id, each a record
//
//	[4] id  [1] kind  [n] key
//
// appended and synced before the series' first sample is.
const (
	seriesMagic = "EDTSSER\x00"
	seriesFile  = "series"
	maxKey      = 1024
)

// SeriesID identifies a series of a store.
type SeriesID uint32

// seriesKey is a series' identity: a key has one series per kind.
type seriesKey struct {
	key  string
	kind Kind
}

// openSeries reads the series file of dir, creating it if there is none;
// a torn tail is cut off (reported through note). It returns the file,
// open for appending, and the series in id order.
func openSeries(dir string, note func(string)) (*os.File, []seriesKey, error) {
	path := filepath.Join(dir, seriesFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	keys, err := readSeries(f, path, note)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, keys, nil
}

func readSeries(f *os.File, path string, note func(string)) ([]seriesKey, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < headerSize {
		// New, or torn before its header was whole.
		if err := f.Truncate(0); err != nil {
			return nil, err
		}
		if _, err := f.WriteAt(fileHeader(seriesMagic), 0); err != nil {
			return nil, err
		}
		return nil, f.Sync()
	}
	h := make([]byte, headerSize)
	if _, err := f.ReadAt(h, 0); err != nil {
		return nil, err
	}
	if err := checkHeader(h, seriesMagic); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rr := recordReader{r: f, off: headerSize, end: fi.Size()}
	var keys []seriesKey
	for {
		p, err := rr.next()
		if err == io.EOF {
			return keys, nil
		}
		if errors.Is(err, errTorn) {
			note(fmt.Sprintf("%s: a torn record at offset %d cut off (%d bytes): the series it named had no samples yet", path, rr.off, rr.end-rr.off))
			return keys, f.Truncate(rr.off)
		}
		if err != nil {
			return nil, err
		}
		if len(p) < 5 || len(p)-5 > maxKey {
			return nil, fmt.Errorf("%s: record at offset %d: %d bytes is no series", path, rr.off, len(p))
		}
		id := binary.LittleEndian.Uint32(p)
		k := seriesKey{key: string(p[5:]), kind: Kind(p[4])}
		if id != uint32(len(keys)) || !k.kind.valid() {
			return nil, fmt.Errorf("%s: record at offset %d: series %d of kind %d where %d was next", path, rr.off, id, p[4], len(keys))
		}
		keys = append(keys, k)
	}
}

// appendSeries appends series id to f, synced.
func appendSeries(f *os.File, id SeriesID, k seriesKey) error {
	p := binary.LittleEndian.AppendUint32(nil, uint32(id))
	p = append(p, byte(k.kind))
	p = append(p, k.key...)
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return err
	}
	if _, err := f.Write(appendRecord(nil, p)); err != nil {
		return err
	}
	return f.Sync()
}
