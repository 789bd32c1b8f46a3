// Package tsdb is the gateway's store of time-stamped data: series of
// samples (a time, a status, a value) in a folder of their own, compressed
// as time-series stores do (delta-of-delta times, XOR floats, integer
// deltas), written in batches to a write-ahead log and cut into immutable,
// checksummed blocks, bounded by age, size and the free space it must
// leave. It knows nothing of what it stores for: OPC UA history, event
// history and a northbound's replay read it alike.
//
//	db, err := tsdb.Open(dir, tsdb.Options{})
//	id, err := db.Series("sim.Counter", tsdb.Int)
//	err = db.Append(id, &tsdb.Sample{Time: t, Value: 42})
//	err = db.Scan(id, from, to, false, lost, func(s *tsdb.Sample) bool { ...; return true })
//
// See docs/history.md for the format and what a power cut costs.
package tsdb
