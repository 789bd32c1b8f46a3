package sparkplug

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// A DDATA payload, byte by byte (protobuf wire format of
// sparkplug_b.proto's Payload).
func TestAppendVector(t *testing.T) {
	b := AppendHeader(nil, 1000, 7, true)
	b = AppendMetric(b, &Metric{Alias: 9, HasAlias: true, Timestamp: 1000, Value: Value{Type: UInt32, Bits: 300}})
	b = AppendMetric(b, &Metric{Alias: 10, HasAlias: true, Timestamp: 1000, Value: Value{Type: Int16, Bits: uint64(math.MaxUint64)}}) // -1
	b = AppendMetric(b, &Metric{Alias: 11, HasAlias: true, Timestamp: 1000, Value: Value{Type: Float, Bits: math.Float64bits(1.5)},
		Properties: []Property{{Key: "Quality", Value: Value{Type: Int32, Bits: 500}}}})
	want := []byte{
		0x08, 0xe8, 0x07, // timestamp = 1000
		0x18, 0x07, // seq = 7
		0x12, 0x0a, // metric, 10 bytes
		0x10, 0x09, // alias 9
		0x18, 0xe8, 0x07, // timestamp 1000
		0x20, 0x07, // datatype UInt32
		0x50, 0xac, 0x02, // int_value 300
		0x12, 0x0d, // metric, 13 bytes
		0x10, 0x0a, 0x18, 0xe8, 0x07, 0x20, 0x02, // alias 10, timestamp, datatype Int16
		0x50, 0xff, 0xff, 0xff, 0xff, 0x0f, // int_value 0xffffffff: -1 as the specification's uint32
		0x12, 0x1e, // metric, 30 bytes
		0x10, 0x0b, 0x18, 0xe8, 0x07, 0x20, 0x09, // alias 11, timestamp, datatype Float
		0x4a, 0x10, // properties, 16 bytes
		0x0a, 0x07, 'Q', 'u', 'a', 'l', 'i', 't', 'y', // keys[0]
		0x12, 0x05, 0x08, 0x03, 0x18, 0xf4, 0x03, // values[0]: type Int32, int_value 500
		0x65, 0x00, 0x00, 0xc0, 0x3f, // float_value 1.5
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("got  % x\nwant % x", b, want)
	}
}

var roundTrip = []Metric{
	{Name: "bdSeq", Alias: 1, HasAlias: true, Timestamp: 1, Value: Value{Type: UInt64, Bits: 255}},
	{Name: "Node Control/Rebirth", Alias: 2, HasAlias: true, Timestamp: 1, Value: Value{Type: Boolean}},
	{Alias: 3, HasAlias: true, Timestamp: 2, Historical: true, Value: Value{Type: Int32, Bits: uint64(math.MaxUint64 - 41)}}, // -42
	{Alias: 4, HasAlias: true, Value: Value{Type: Int64, Bits: 1 << 63}},
	{Alias: 5, HasAlias: true, Value: Value{Type: UInt16, Bits: 65535}},
	{Alias: 6, HasAlias: true, Value: Value{Type: Double, Bits: math.Float64bits(-0.25)}},
	{Alias: 7, HasAlias: true, Value: Value{Type: String, Text: "a text of some length"}},
	{Alias: 8, HasAlias: true, Value: Value{Type: Boolean, Bits: 1}},
	{Alias: 9, HasAlias: true, Value: Value{Type: UInt32, Null: true}},
	{Name: "long", Value: Value{Type: String, Text: string(bytes.Repeat([]byte("x"), 300))}}, // a length of two bytes
}

func encodeAll(ms []Metric) []byte {
	b := AppendHeader(nil, 123456789, 255, true)
	for i := range ms {
		b = AppendMetric(b, &ms[i])
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	b := encodeAll(roundTrip)
	var got []Metric
	h, err := Decode(b, func(m *Metric) error { got = append(got, *m); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if h != (Header{Timestamp: 123456789, Seq: 255, HasSeq: true}) {
		t.Errorf("header %+v", h)
	}
	if len(got) != len(roundTrip) {
		t.Fatalf("%d metrics, want %d", len(got), len(roundTrip))
	}
	for i := range got {
		w := roundTrip[i]
		w.Properties = nil
		if got[i].Name != w.Name || got[i].Alias != w.Alias || got[i].HasAlias != w.HasAlias || got[i].Timestamp != w.Timestamp ||
			got[i].Historical != w.Historical || got[i].Value != w.Value {
			t.Errorf("metric %d: got %+v, want %+v", i, got[i], w)
		}
	}
}

// Every truncated prefix of a payload either decodes (a prefix may end
// between fields) or fails with ErrMalformed; none panics.
func TestTruncated(t *testing.T) {
	b := encodeAll(roundTrip)
	for n := range len(b) {
		_, err := Decode(b[:n], func(*Metric) error { return nil })
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("prefix %d: %v", n, err)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, b := range map[string][]byte{
		"length beyond the payload": {0x12, 0x05, 0x10},
		"field zero":                {0x00, 0x01},
		"a group":                   {0x13},
		"an Int8 beyond 8 bits":     AppendMetric(nil, &Metric{Alias: 1, HasAlias: true, Value: Value{Type: UInt32, Bits: 200}}),
		"a Boolean of 2":            {0x12, 0x04, 0x20, 0x0b, 0x70, 0x02},
		"a String in int_value":     {0x12, 0x04, 0x20, 0x0c, 0x50, 0x01},
		"an unknown type":           {0x12, 0x04, 0x20, 0x63, 0x50, 0x01},
		"a varint of eleven bytes":  {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"a double in 4 bytes":       {0x12, 0x07, 0x20, 0x0a, 0x69, 0, 0, 0, 0},
		"a UInt16 beyond 16 bits":   {0x12, 0x05, 0x20, 0x06, 0x50, 0x80, 0x80, 0x04},
	} {
		if name == "an Int8 beyond 8 bits" {
			b[5] = byte(Int8) // the datatype byte: 200 does not fit an Int8
		}
		if _, err := Decode(b, func(*Metric) error { return nil }); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// A DATA metric without a datatype is read for its birth's type.
func TestOmitType(t *testing.T) {
	b := AppendMetric(nil, &Metric{Alias: 12, HasAlias: true, Timestamp: 5, OmitType: true, Value: Value{Type: Int16, Bits: uint64(math.MaxUint64)}})
	if bytes.Contains(b, []byte{0x20, byte(Int16)}) {
		t.Fatalf("a datatype in % x", b)
	}
	var m Metric
	if _, err := Decode(b, func(d *Metric) error { m = *d; return nil }); err != nil || m.Value.Type != 0 {
		t.Fatalf("%+v %v", m, err)
	}
	if v, err := m.As(Int16); err != nil || int64(v.Bits) != -1 {
		t.Errorf("As(Int16): %+v %v", v, err)
	}
	if _, err := m.As(Double); !errors.Is(err, ErrMalformed) {
		t.Errorf("As(Double) of an int_value: %v", err)
	}
}

// Tahu's JavaScript encoder puts a UInt32 in long_value: read as well.
func TestDecodeUInt32InLong(t *testing.T) {
	b := []byte{0x12, 0x05, 0x20, 0x07, 0x58, 0xac, 0x02}
	var v Value
	if _, err := Decode(b, func(m *Metric) error { v = m.Value; return nil }); err != nil || v.Bits != 300 {
		t.Fatalf("%+v, %v", v, err)
	}
}

// Appending a DDATA's metrics allocates nothing once the buffer has
// grown.
func TestAppendAllocs(t *testing.T) {
	buf := make([]byte, 0, 4096)
	props := []Property{{Key: "Quality", Value: Value{Type: Int32, Bits: 0}}}
	allocs := testing.AllocsPerRun(100, func() {
		b := AppendHeader(buf[:0], 1, 2, true)
		for i := range 50 {
			m := Metric{Alias: uint64(i), HasAlias: true, Timestamp: 1, Value: Value{Type: Double, Bits: uint64(i)}}
			if i%10 == 0 {
				m.Properties = props
			}
			b = AppendMetric(b, &m)
		}
		buf = b
	})
	if allocs != 0 {
		t.Errorf("%v allocations per payload, want 0", allocs)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encodeAll(roundTrip))
	f.Add(encodeAll(roundTrip[:3]))
	f.Add([]byte{0x12, 0x05, 0x20, 0x07, 0x58, 0xac, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		var ms []Metric
		h, err := Decode(b, func(m *Metric) error { ms = append(ms, *m); return nil })
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v not ErrMalformed", err)
			}
			return
		}
		// What decodes encodes to something that decodes to the same.
		out := AppendHeader(nil, h.Timestamp, h.Seq, h.HasSeq)
		for i := range ms {
			out = AppendMetric(out, &ms[i])
		}
		var again []Metric
		if _, err := Decode(out, func(m *Metric) error { again = append(again, *m); return nil }); err != nil {
			t.Fatalf("re-encoded payload: %v", err)
		}
		if len(again) != len(ms) {
			t.Fatalf("%d metrics, then %d", len(ms), len(again))
		}
		for i := range ms {
			a, b := ms[i].Value, again[i].Value
			if a.Type == 0 {
				continue // a value left to its birth's type, not re-encoded
			}
			if a.Type == Float || a.Type == Double {
				if math.IsNaN(math.Float64frombits(a.Bits)) {
					continue
				}
			}
			if a != b && !(a.Null && b.Null) {
				t.Fatalf("metric %d: %+v, then %+v", i, a, b)
			}
		}
	})
}

func TestParseState(t *testing.T) {
	for in, want := range map[string]bool{`{"online":true,"timestamp":5}`: true, `{"online":false,"timestamp":5}`: false, "ONLINE": true, "OFFLINE": false} {
		s, err := ParseState([]byte(in))
		if err != nil || s.Online != want {
			t.Errorf("%s: %+v %v", in, s, err)
		}
	}
	for _, in := range []string{`{}`, `nonsense`, `{"online":"yes"}`} {
		if _, err := ParseState([]byte(in)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestTopics(t *testing.T) {
	if got := string(AppendTopic(nil, "G", DDATA, "N", "D")); got != "spBv1.0/G/DDATA/N/D" {
		t.Error(got)
	}
	if tp, ok := ParseTopic("spBv1.0/G/DCMD/N/D"); !ok || tp != (Topic{"G", "DCMD", "N", "D"}) {
		t.Error(tp, ok)
	}
	for _, s := range []string{"spBv1.0/G/DCMD", "x/G/DCMD/N", "spBv1.0/G/DCMD/N/D/E"} {
		if _, ok := ParseTopic(s); ok {
			t.Error(s)
		}
	}
}
