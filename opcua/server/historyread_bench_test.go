package server

import (
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/edged/edged/opcua/history"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/tsdb"
)

// storeHistory serves plc.Temp's history from a tsdb series, as the
// binding serves a tag's.
type storeHistory struct {
	db *tsdb.DB
	id tsdb.SeriesID
}

func (r storeHistory) Read(h uint32, from, to int64, reverse bool, fn func(*history.Value) bool) error {
	var v history.Value
	return r.db.Scan(r.id, from, to, reverse, uint32(status.BadDataLost), func(s *tsdb.Sample) bool {
		v.T, v.Status = s.Time, ua.StatusCode(s.Status)
		v.V.SetFloat64(math.Float64frombits(s.Value))
		return fn(&v)
	})
}

func (storeHistory) Aggregation(uint32) history.Config { return history.Config{} }

// BenchmarkServerHistoryReadDay is a client reading a day of a tag
// sampled every second (86,400 values of a temperature) from the store,
// raw, 10,000 values per HistoryRead: one op is the day, 9 requests, the
// whole server path of each (chunk bytes in to chunk bytes out, as
// BenchmarkServerRead1) in the benchmark's goroutine.
func BenchmarkServerHistoryReadDay(b *testing.B) {
	const day = 86400
	db, err := tsdb.Open(b.TempDir(), tsdb.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	sid, err := db.Series("plc.Temp", tsdb.Float64)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range day {
		v := 20 + 5*math.Sin(float64(i)/3600) + float64(i%7)/100
		s := tsdb.Sample{Time: t0.Add(time.Duration(i) * time.Second).UnixNano(), Value: math.Float64bits(math.Round(v*100) / 100)}
		if err := db.Append(sid, &s); err != nil {
			b.Fatal(err)
		}
	}
	db.Flush()
	srv := newTestServer(b, Config{})
	temp, _ := addHistVars(b, srv, storeHistory{db: db, id: sid})
	req := &ua.HistoryReadRequest{
		HistoryReadDetails: ua.ExtensionObject{Body: &ua.ReadRawModifiedDetails{
			StartTime: t0, EndTime: t0.Add(day * time.Second), NumValuesPerNode: 10000}},
		TimestampsToReturn: ua.TimestampsToReturnSource,
		NodesToRead:        []ua.HistoryReadValueID{{NodeID: temp}},
	}
	bc := openBenchConn(b, srv, req, &req.RequestHeader)
	// readDay reads the day; check decodes each response as a client
	// would and counts its values (outside the measured loop). In the loop
	// only the result's status and continuation point are decoded.
	var d ua.Decoder
	var typ ua.NodeID
	var hdr ua.ResponseHeader
	readDay := func(check func()) (calls int) {
		cp := &req.NodesToRead[0].ContinuationPoint
		*cp = (*cp)[:0]
		for {
			bc.setRequest(req)
			bc.step(b)
			d.Reset(bc.c.out)
			typ.Decode(&d)
			hdr.Decode(&d)
			if n := d.ReadInt32(); n != 1 || typ.Numeric != id.HistoryReadResponse_Encoding_DefaultBinary {
				b.Fatalf("response %v with %d results", typ, n)
			}
			if st := ua.StatusCode(d.ReadUint32()); st != status.Good {
				b.Fatalf("HistoryRead: %v", st)
			}
			*cp = d.ReadByteString((*cp)[:0])
			if d.Err() != nil {
				b.Fatal(d.Err())
			}
			calls++
			if check != nil {
				check()
			}
			if len(*cp) == 0 {
				return calls
			}
		}
	}
	n, last := 0, int64(0)
	calls := readDay(func() {
		m, err := ua.DecodeMessage(ua.NewDecoder(bc.c.out))
		if err != nil {
			b.Fatal(err)
		}
		for _, dv := range m.(*ua.HistoryReadResponse).Results[0].HistoryData.Body.(*ua.HistoryData).DataValues {
			if t := dv.SourceTimestamp.UnixNano(); t <= last || dv.Status != status.Good {
				b.Fatalf("value %d: %v at %v", n, dv.Status, dv.SourceTimestamp)
			} else {
				last = t
			}
			n++
		}
	})
	if calls != 9 || n != day {
		b.Fatalf("a day in %d calls, %d values; want 9, %d", calls, n, day)
	}
	b.ReportAllocs()
	for b.Loop() {
		readDay(nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/day, "ns/value")
}
