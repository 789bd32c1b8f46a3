package historian

import (
	"math"
	"sync"

	"github.com/edged/edged/tsdb"
)

// EventSeries is the key of the store's series of events: no tag has it
// (a tag's key is device.tag).
const EventSeries = "_events"

// Events keeps encoded events, whatever they hold, in the store's series
// EventSeries, in time order: the server's event history. The store's
// bounds (age, size) apply to it as to the tags' series.
type Events struct {
	db   *tsdb.DB
	id   tsdb.SeriesID
	mu   sync.Mutex
	last int64 // the last event's time in the store
}

// OpenEvents returns the event series of db.
func OpenEvents(db *tsdb.DB) (*Events, error) {
	id, err := db.Series(EventSeries, tsdb.Bytes)
	if err != nil {
		return nil, err
	}
	e := &Events{db: db, id: id, last: math.MinInt64}
	err = db.Scan(id, math.MinInt64, math.MaxInt64, true, 0, func(s *tsdb.Sample) bool {
		e.last = s.Time
		return false
	})
	return e, err
}

// AppendEvent keeps rec at Unix ns t, or just after the last event when
// t is not after it (two events in one tick of the store's time, or a
// clock stepped back): the series' order is the order events came in.
func (e *Events) AppendEvent(t int64, rec []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last != math.MinInt64 {
		t = max(t, e.last+tsdb.Resolution)
	}
	if err := e.db.Append(e.id, &tsdb.Sample{Time: t, Bytes: rec}); err != nil {
		return err
	}
	e.last = t
	return nil
}

// ScanEvents calls fn with the events from..to (Unix ns, both included),
// newest first when reverse, until fn returns false; rec is valid during
// the call only. A part of the store that cannot be read is skipped (the
// store logs it).
func (e *Events) ScanEvents(from, to int64, reverse bool, fn func(t int64, rec []byte) bool) error {
	return e.db.Scan(e.id, from, to, reverse, 0, func(s *tsdb.Sample) bool {
		if s.NoValue {
			return true
		}
		return fn(s.Time, s.Bytes)
	})
}
