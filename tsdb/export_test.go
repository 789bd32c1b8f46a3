package tsdb

// Tick runs one round of the flusher (tests open stores with a long
// FlushInterval so that theirs do not run).
func (db *DB) Tick() { db.Flush() }

// Cut makes the head a block now.
func (db *DB) Cut() error {
	db.flushMu.Lock()
	defer db.flushMu.Unlock()
	now := db.opt.Now().UnixNano()
	if err := db.flush(now, false); err != nil {
		return err
	}
	return db.cut(now)
}

// SetFreeSpace replaces the file system's free space for the test.
func SetFreeSpace(f func(string) (int64, bool)) (restore func()) {
	old := freeSpace
	freeSpace = f
	return func() { freeSpace = old }
}

// ColdPending reports whether a cut's block waits to be written.
func (db *DB) ColdPending() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.cold != nil
}
