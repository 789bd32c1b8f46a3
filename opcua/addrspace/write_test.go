package addrspace

import (
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

func (f *fixture) write(node string, attr ua.AttributeID, rng string, dv ua.DataValue, user User) ua.StatusCode {
	return f.s.Write(&ua.WriteValue{NodeID: f.id(node), AttributeID: uint32(attr), IndexRange: rng, Value: dv}, user)
}

func val(x any) ua.DataValue { return ua.DataValue{Value: ua.MustVariant(x)} }

// pval is val for a Node's Value.
func pval(x any) *ua.DataValue { v := val(x); return &v }

func TestWriteValueTypes(t *testing.T) {
	mismatch := status.BadTypeMismatch
	m2, _ := ua.NewMatrix([]int32{1, 2, 3, 4}, []int32{2, 2})
	for _, tc := range []struct {
		node string
		v    ua.DataValue
		want ua.StatusCode
	}{
		{"Int", val(int32(5)), status.Good},
		{"Int", val(int64(5)), mismatch},
		{"Int", val(uint32(5)), mismatch},
		{"Int", val([]int32{5}), mismatch},
		{"Int", ua.DataValue{}, mismatch},
		{"Arr", val([]float64{1, 2}), status.Good},
		{"Arr", val([]float64{}), status.Good},
		{"Arr", val(1.0), mismatch},
		{"Arr", val([]float32{1}), mismatch},
		{"Matrix", ua.DataValue{Value: m2}, status.Good},
		{"Matrix", val([]int32{1}), mismatch},
		{"Any", ua.DataValue{}, status.Good},
		{"Any", val("x"), status.Good},
		{"Any", val([]string{"x"}), status.Good},
		{"Num", val(int8(1)), status.Good},
		{"Num", val(2.5), status.Good},
		{"Num", val([]uint64{1}), status.Good},
		{"Num", ua.DataValue{Value: m2}, mismatch},
		{"Num", val("1"), mismatch},
		{"Num", val(true), mismatch},
		{"Time", val(testTime), status.Good},
		{"Time", val(int64(1)), mismatch},
		{"State", val(int32(1)), status.Good},
		{"State", val(uint32(1)), mismatch},
		{"Status", val(ua.ExtensionObject{Body: &ua.BuildInfo{ProductName: "x"}}), status.Good},
		{"Status", val("x"), mismatch},
		{"Str", val("x"), status.Good},
		{"Str", val([]byte("x")), mismatch},
		{"Bytes", val([]byte("x")), status.Good},
		{"ByteArr", val([]byte{1, 2}), status.Good},
		{"ByteArr", ua.DataValue{Value: ua.NewByteArray([]byte{1})}, status.Good},
		{"RO", val(1.0), status.BadNotWritable},
		{"Nope", val(1.0), status.BadNodeIDUnknown},
		{"Plant", val(1.0), status.BadAttributeIDInvalid},
	} {
		f := newFixture(t)
		if got := f.write(tc.node, ua.AttributeIDValue, "", tc.v, nil); got != tc.want {
			t.Errorf("write %v to %s: %v, want %v", tc.v.Value, tc.node, got, tc.want)
			continue
		}
		if tc.want != status.Good {
			continue
		}
		dv := f.read(f.id(tc.node), ua.AttributeIDValue, "")
		want := tc.v.Value
		if b, ok := want.ByteString(); ok && tc.node == "ByteArr" {
			want = ua.NewByteArray(b)
		}
		if !dv.Value.Equal(want) {
			t.Errorf("%s after write = %v, want %v", tc.node, dv.Value, want)
		}
	}
}

func TestWriteAccess(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		node string
		dv   ua.DataValue
		user User
		want ua.StatusCode
	}{
		{"Int", val(int32(1)), ReadOnlyUser{}, status.BadUserAccessDenied},
		{"Int", val(int32(1)), denyAll{}, status.BadUserAccessDenied},
		{"RO", val(1.0), denyAll{}, status.BadNotWritable},
		{"Int", ua.DataValue{Value: ua.MustVariant(int32(1)), Status: status.Uncertain}, nil, status.BadWriteNotSupported},
		{"Int", ua.DataValue{Value: ua.MustVariant(int32(1)), SourceTimestamp: testTime}, nil, status.BadWriteNotSupported},
		{"Int", ua.DataValue{Value: ua.MustVariant(int32(1)), ServerTimestamp: testTime}, nil, status.BadWriteNotSupported},
		// The type is checked first: asyncua sends a SourceTimestamp
		// with every write.
		{"Int", ua.DataValue{Value: ua.MustVariant("1"), SourceTimestamp: testTime}, nil, status.BadTypeMismatch},
		{"Int", ua.DataValue{Value: ua.MustVariant(1.0), SourceTimestamp: testTime, ServerTimestamp: testTime}, nil, status.BadTypeMismatch},
		{"Time", ua.DataValue{Value: ua.MustVariant(testTime), Status: status.Uncertain, SourceTimestamp: testTime.Add(-time.Minute)}, nil, status.Good},
		{"Time", ua.DataValue{Value: ua.MustVariant(testTime), ServerTimestamp: testTime}, nil, status.BadWriteNotSupported},
		{"Ext0", val(int64(1)), nil, status.BadNotWritable},
		{"MyVarType", val(int32(1)), nil, status.BadNotWritable},
	} {
		if got := f.write(tc.node, ua.AttributeIDValue, "", tc.dv, tc.user); got != tc.want {
			t.Errorf("write %+v to %s as %T: %v, want %v", tc.dv, tc.node, tc.user, got, tc.want)
		}
	}
	// Status and source timestamp were stored.
	var rc ReadContext
	var dv ua.DataValue
	f.s.Read(&rc, &ua.ReadValueID{NodeID: f.id("Time"), AttributeID: 13}, ua.TimestampsToReturnBoth, &dv)
	if dv.Status != status.Uncertain || !dv.SourceTimestamp.Equal(testTime.Add(-time.Minute)) {
		t.Errorf("Time = %+v", dv)
	}
	// Without a source timestamp the clock's time is stored.
	if st := f.write("Int", ua.AttributeIDValue, "", val(int32(9)), nil); st != status.Good {
		t.Fatal(st)
	}
	f.s.Read(&rc, &ua.ReadValueID{NodeID: f.id("Int"), AttributeID: 13}, ua.TimestampsToReturnBoth, &dv)
	if !dv.SourceTimestamp.Equal(testTime) {
		t.Errorf("Int source timestamp %v", dv.SourceTimestamp)
	}
}

func TestWriteSink(t *testing.T) {
	f := newFixture(t)
	var sink sinkRecorder
	if err := f.s.SetSink(f.id("Ext2"), &sink); err != nil {
		t.Fatal(err)
	}
	if st := f.write("Ext2", ua.AttributeIDValue, "", val(int64(77)), nil); st != status.Good {
		t.Fatal(st)
	}
	if x, _ := sink.got.Int64(); sink.n != 1 || sink.h != 2 || x != 77 {
		t.Errorf("sink got %d writes, handle %d, %v", sink.n, sink.h, sink.got)
	}
	// Type checks come first.
	if st := f.write("Ext2", ua.AttributeIDValue, "", val(int32(77)), nil); st != status.BadTypeMismatch || sink.n != 1 {
		t.Errorf("mistyped write to a sink: %v, %d writes", st, sink.n)
	}
	// The source still serves the value.
	if dv := f.read(f.id("Ext2"), ua.AttributeIDValue, ""); !dv.Value.Equal(ua.MustVariant(int64(12))) {
		t.Errorf("Ext2 = %v", dv.Value)
	}
}

// TestWritePending: a sink that answers later makes Write wait for the
// answer without the Space's lock (a Read and another Write go on), and
// WriteStart hands the Pending result to the caller.
func TestWritePending(t *testing.T) {
	f := newFixture(t)
	sink := sinkRecorder{pending: make(chan ua.StatusCode, 1)}
	if err := f.s.SetSink(f.id("Ext2"), &sink); err != nil {
		t.Fatal(err)
	}
	done := make(chan ua.StatusCode)
	go func() { done <- f.write("Ext2", ua.AttributeIDValue, "", val(int64(5)), nil) }()
	// Until the sink answers, the space serves others: a Read and a
	// Write of a static variable complete while the first Write waits.
	for {
		f.s.mu.RLock()
		n := sink.n
		f.s.mu.RUnlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if dv := f.read(f.id("Ext2"), ua.AttributeIDValue, ""); dv.Status != status.Good {
		t.Errorf("read while a write waits: %v", dv.Status)
	}
	if st := f.write("Int", ua.AttributeIDValue, "", val(int32(3)), nil); st != status.Good {
		t.Errorf("static write while a write waits: %v", st)
	}
	sink.pending <- status.BadCommunicationError
	if st := <-done; st != status.BadCommunicationError {
		t.Errorf("Write = %v, want the sink's later BadCommunicationError", st)
	}
	// WriteStart returns the pending result instead of waiting.
	wv := ua.WriteValue{NodeID: f.id("Ext2"), AttributeID: uint32(ua.AttributeIDValue), Value: val(int64(6))}
	st, p := f.s.WriteStart(&wv, nil)
	if st != status.Good || p == nil {
		t.Fatalf("WriteStart = %v, %v", st, p)
	}
	sink.pending <- status.Good
	if st := <-p; st != status.Good {
		t.Errorf("pending result %v", st)
	}
	// A check that fails is answered at once, without a Pending result.
	wv.Value = val(int32(6))
	if st, p := f.s.WriteStart(&wv, nil); st != status.BadTypeMismatch || p != nil {
		t.Errorf("WriteStart of a mistyped value = %v, %v", st, p)
	}
}

func TestWriteIndexRange(t *testing.T) {
	for _, tc := range []struct {
		node, rng string
		v         ua.DataValue
		want      ua.StatusCode
		after     any
	}{
		{"Arr", "1:2", val([]float64{10, 20}), status.Good, []float64{0, 10, 20, 3, 4, 5}},
		{"Arr", "5", val([]float64{50}), status.Good, []float64{0, 1, 2, 3, 4, 50}},
		{"Arr", "1:2", val([]float64{10}), status.BadIndexRangeDataMismatch, nil},
		{"Arr", "5:6", val([]float64{10, 20}), status.BadIndexRangeNoData, nil},
		{"Arr", "1", val(1.0), status.BadTypeMismatch, nil},
		{"Arr", "1", val([]int32{1}), status.BadTypeMismatch, nil},
		{"Arr", "x", val([]float64{1}), status.BadIndexRangeInvalid, nil},
		{"Str", "1:2", val("XY"), status.Good, "aXYdef"},
		{"Str", "5:6", val("XY"), status.BadIndexRangeNoData, nil},
		{"Bytes", "0", val([]byte{9}), status.Good, []byte{9, 2, 3, 4}},
		{"ByteArr", "0:1", val([]byte{1, 2}), status.Good, ua.NewByteArray([]byte{1, 2, 7})},
		{"Matrix", "0,0", val([]int32{1}), status.BadWriteNotSupported, nil},
		{"Int", "0", val(int32(1)), status.BadIndexRangeNoData, nil},
	} {
		f := newFixture(t)
		before := f.read(f.id(tc.node), ua.AttributeIDValue, "")
		if got := f.write(tc.node, ua.AttributeIDValue, tc.rng, tc.v, nil); got != tc.want {
			t.Errorf("write %v to %s[%s]: %v, want %v", tc.v.Value, tc.node, tc.rng, got, tc.want)
			continue
		}
		dv := f.read(f.id(tc.node), ua.AttributeIDValue, "")
		want := before.Value
		if tc.after != nil {
			if want, _ = tc.after.(ua.Variant); want.IsNull() {
				want = ua.MustVariant(tc.after)
			}
		}
		if !dv.Value.Equal(want) {
			t.Errorf("%s after write [%s] = %v, want %v", tc.node, tc.rng, dv.Value, want)
		}
	}
}

// TestWriteCopies checks that a stored value shares nothing with the
// request, and that a reader's value is not changed by a later write.
func TestWriteCopies(t *testing.T) {
	f := newFixture(t)
	old := f.read(f.id("Arr"), ua.AttributeIDValue, "")
	in := []float64{7, 8, 9}
	if st := f.write("Arr", ua.AttributeIDValue, "", val(in), nil); st != status.Good {
		t.Fatal(st)
	}
	in[0] = 100
	if dv := f.read(f.id("Arr"), ua.AttributeIDValue, ""); !dv.Value.Equal(ua.MustVariant([]float64{7, 8, 9})) {
		t.Errorf("stored value follows the request: %v", dv.Value)
	}
	if st := f.write("Arr", ua.AttributeIDValue, "0", val([]float64{1}), nil); st != status.Good {
		t.Fatal(st)
	}
	if !old.Value.Equal(ua.MustVariant([]float64{0, 1, 2, 3, 4, 5})) {
		t.Errorf("a reader's value changed: %v", old.Value)
	}
}

func TestWriteAttributes(t *testing.T) {
	f := newFixture(t)
	lt := ua.LocalizedText{Locale: "de", Text: "Anlage"}
	for _, tc := range []struct {
		node string
		attr ua.AttributeID
		dv   ua.DataValue
		user User
		want ua.StatusCode
	}{
		{"Plant", ua.AttributeIDDisplayName, val(lt), denyAll{}, status.BadUserAccessDenied},
		{"Plant", ua.AttributeIDDisplayName, val("Anlage"), nil, status.BadTypeMismatch},
		{"Plant", ua.AttributeIDDisplayName, ua.DataValue{Value: ua.MustVariant(lt), Status: status.Uncertain}, nil, status.BadWriteNotSupported},
		{"Plant", ua.AttributeIDDisplayName, val(lt), nil, status.Good},
		{"Plant", ua.AttributeIDDescription, val(lt), nil, status.BadNotWritable},
		{"Plant", ua.AttributeIDBrowseName, val(ua.QualifiedName{Name: "x"}), nil, status.BadNotWritable},
		{"Plant", ua.AttributeIDNodeID, val(nid(1)), nil, status.BadNotWritable},
		{"Plant", ua.AttributeIDValue, val(1.0), nil, status.BadAttributeIDInvalid},
		{"Plant", 99, val(1.0), nil, status.BadAttributeIDInvalid},
		{"Int", ua.AttributeIDAccessLevel, val(uint8(1)), nil, status.BadNotWritable},
	} {
		if got := f.write(tc.node, tc.attr, "", tc.dv, tc.user); got != tc.want {
			t.Errorf("write %v %v: %v, want %v", tc.node, tc.attr, got, tc.want)
		}
	}
	if dv := f.read(f.id("Plant"), ua.AttributeIDDisplayName, ""); !dv.Value.Equal(ua.MustVariant(lt)) {
		t.Errorf("DisplayName = %v", dv.Value)
	}
	// Browse sees the new DisplayName.
	res := f.browse(ua.BrowseDescription{NodeID: nid(id.ObjectsFolder), ReferenceTypeID: nid(id.Organizes), ResultMask: 63})
	found := false
	for _, r := range res.References {
		found = found || r.DisplayName == lt
	}
	if !found {
		t.Error("Browse does not show the written DisplayName")
	}
}

func TestCheckValue(t *testing.T) {
	f := newFixture(t)
	if st := f.s.CheckValue(f.id("Int"), ua.MustVariant(int32(1))); st != status.Good {
		t.Error(st)
	}
	if st := f.s.CheckValue(f.id("Int"), ua.MustVariant(1.0)); st != status.BadTypeMismatch {
		t.Error(st)
	}
	if st := f.s.CheckValue(f.id("Plant"), ua.MustVariant(1.0)); st != status.BadTypeMismatch {
		t.Error(st)
	}
	// A subtype of Int32 takes an Int32.
	if err := f.s.AddNode(&Node{ID: f.id("Sub"), Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{Name: "Sub"},
		DataType: f.id("MyData"), ValueRank: ValueRankScalar, AccessLevel: 3}, mkRef(id.HasComponent, f.id("Plant"), true)); err != nil {
		t.Fatal(err)
	}
	if st := f.s.CheckValue(f.id("Sub"), ua.MustVariant(int32(1))); st != status.Good {
		t.Error(st)
	}
}
