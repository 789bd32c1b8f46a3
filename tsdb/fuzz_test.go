package tsdb

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen: whatever the store's files hold, Open and a scan of every
// series return, with an error or with samples, and never panic.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	db, err := Open(dir, testOpts(nil))
	if err != nil {
		f.Fatal(err)
	}
	for i, k := range []Kind{Bool, Int, Float32, Float64, Bytes} {
		id, _ := db.Series(string(rune('a'+i)), k)
		for j, s := range randomSamplesSeeded(k, 30) {
			_ = j
			db.Append(id, &s)
		}
	}
	db.Cut()
	db.Tick()
	db.Close()
	read := func(name string) []byte { b, _ := os.ReadFile(filepath.Join(dir, name)); return b }
	f.Add(read(seriesFile), read(walName(1)), read(blockName(0)))
	f.Fuzz(func(t *testing.T, series, wal, blk []byte) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, seriesFile), series, 0o644)
		os.WriteFile(filepath.Join(d, walName(1)), wal, 0o644)
		os.WriteFile(filepath.Join(d, blockName(0)), blk, 0o644)
		db, err := Open(d, testOpts(nil))
		if err != nil {
			return
		}
		defer db.Close()
		var st Stats
		db.Stats(&st)
		for id := range st.Series {
			db.Scan(SeriesID(id), math.MinInt64, math.MaxInt64, false, 0, func(*Sample) bool { return true })
			db.Scan(SeriesID(id), math.MinInt64, math.MaxInt64, true, 0, func(*Sample) bool { return true })
		}
	})
}
