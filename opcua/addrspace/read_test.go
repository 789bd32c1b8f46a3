package addrspace

import (
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

func (f *fixture) read(node ua.NodeID, attr ua.AttributeID, rng string) ua.DataValue {
	var rc ReadContext
	var dv ua.DataValue
	f.s.Read(&rc, &ua.ReadValueID{NodeID: node, AttributeID: uint32(attr), IndexRange: rng}, ua.TimestampsToReturnNeither, &dv)
	return dv
}

// TestReadAttributes reads every attribute of a node of each class.
func TestReadAttributes(t *testing.T) {
	f := newFixture(t)
	bad := status.BadAttributeIDInvalid
	type want struct {
		attr ua.AttributeID
		v    any // a Go value as for ua.NewVariant, or a StatusCode
	}
	lt := func(s string) ua.LocalizedText { return ua.LocalizedText{Text: s} }
	qn := func(s string) ua.QualifiedName { return ua.QualifiedName{NamespaceIndex: f.ns, Name: s} }
	common := func(node ua.NodeID, class ua.NodeClass, name string) []want {
		return []want{
			{ua.AttributeIDNodeID, node}, {ua.AttributeIDNodeClass, int32(class)}, {ua.AttributeIDBrowseName, qn(name)},
			{ua.AttributeIDDisplayName, lt(name)}, {ua.AttributeIDDescription, ua.LocalizedText{}},
			{ua.AttributeIDDataTypeDefinition, bad}, {ua.AttributeIDRolePermissions, bad},
			{ua.AttributeIDUserRolePermissions, bad}, {ua.AttributeIDAccessRestrictions, bad},
			{0, bad}, {28, bad}, {1000, bad},
		}
	}
	notVar := []want{{ua.AttributeIDValue, bad}, {ua.AttributeIDDataType, bad}, {ua.AttributeIDValueRank, bad},
		{ua.AttributeIDArrayDimensions, bad}, {ua.AttributeIDAccessLevel, bad}, {ua.AttributeIDUserAccessLevel, bad},
		{ua.AttributeIDMinimumSamplingInterval, bad}, {ua.AttributeIDHistorizing, bad}, {ua.AttributeIDAccessLevelEx, bad}}
	notMethod := []want{{ua.AttributeIDExecutable, bad}, {ua.AttributeIDUserExecutable, bad}}
	notType := []want{{ua.AttributeIDIsAbstract, bad}}
	notRef := []want{{ua.AttributeIDSymmetric, bad}, {ua.AttributeIDInverseName, bad}}
	notView := []want{{ua.AttributeIDContainsNoLoops, bad}}
	cat := func(ws ...[]want) []want {
		var out []want
		for _, w := range ws {
			out = append(out, w...)
		}
		return out
	}
	for _, tc := range []struct {
		node  ua.NodeID
		class ua.NodeClass
		name  string
		ws    []want
	}{
		{f.id("Plant"), ua.NodeClassObject, "Plant", cat(notVar, notMethod, notType, notRef, notView, []want{
			{ua.AttributeIDEventNotifier, uint8(0)},
			{ua.AttributeIDWriteMask, uint32(ua.AttributeWriteMaskDisplayName)},
			{ua.AttributeIDUserWriteMask, uint32(ua.AttributeWriteMaskDisplayName)},
		})},
		{f.id("Arr"), ua.NodeClassVariable, "Arr", cat(notMethod, notType, notRef, notView, []want{
			{ua.AttributeIDValue, []float64{0, 1, 2, 3, 4, 5}},
			{ua.AttributeIDDataType, nid(id.Double)},
			{ua.AttributeIDValueRank, int32(1)},
			{ua.AttributeIDArrayDimensions, []uint32{0}},
			{ua.AttributeIDAccessLevel, uint8(3)},
			{ua.AttributeIDUserAccessLevel, uint8(3)},
			{ua.AttributeIDAccessLevelEx, uint32(3)},
			{ua.AttributeIDMinimumSamplingInterval, float64(0)},
			{ua.AttributeIDHistorizing, false},
			{ua.AttributeIDEventNotifier, bad},
			{ua.AttributeIDWriteMask, uint32(0)},
		})},
		{f.id("Method"), ua.NodeClassMethod, "Method", cat(notVar, notType, notRef, notView, []want{
			{ua.AttributeIDExecutable, true}, {ua.AttributeIDUserExecutable, true}, {ua.AttributeIDEventNotifier, bad},
		})},
		{f.id("MyType"), ua.NodeClassObjectType, "MyType", cat(notVar, notMethod, notRef, notView, []want{
			{ua.AttributeIDIsAbstract, true}, {ua.AttributeIDEventNotifier, bad},
		})},
		{f.id("MyVarType"), ua.NodeClassVariableType, "MyVarType", cat(notMethod, notRef, notView, []want{
			{ua.AttributeIDIsAbstract, false}, {ua.AttributeIDValue, int32(3)}, {ua.AttributeIDDataType, nid(id.Int32)},
			{ua.AttributeIDValueRank, int32(-1)}, {ua.AttributeIDAccessLevel, bad}, {ua.AttributeIDHistorizing, bad},
		})},
		{f.id("MyRef"), ua.NodeClassReferenceType, "MyRef", cat(notVar, notMethod, notView, []want{
			{ua.AttributeIDIsAbstract, false}, {ua.AttributeIDSymmetric, false}, {ua.AttributeIDInverseName, lt("MyRefOf")},
		})},
		{f.id("MyData"), ua.NodeClassDataType, "MyData", cat(notVar, notMethod, notRef, notView, []want{
			{ua.AttributeIDIsAbstract, false},
		})},
		{f.id("View"), ua.NodeClassView, "View", cat(notVar, notMethod, notType, notRef, []want{
			{ua.AttributeIDContainsNoLoops, true}, {ua.AttributeIDEventNotifier, uint8(1)},
		})},
	} {
		for _, w := range cat(common(tc.node, tc.class, tc.name), tc.ws) {
			dv := f.read(tc.node, w.attr, "")
			if st, ok := w.v.(ua.StatusCode); ok {
				if dv.Status != st || !dv.Value.IsNull() {
					t.Errorf("%s %v: %v %v, want %v", tc.name, w.attr, dv.Status, dv.Value, st)
				}
				continue
			}
			if dv.Status != status.Good || !dv.Value.Equal(ua.MustVariant(w.v)) {
				t.Errorf("%s %v: %v %v, want %v", tc.name, w.attr, dv.Status, dv.Value, ua.MustVariant(w.v))
			}
		}
	}
}

func TestReadErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		rv   ua.ReadValueID
		user User
		want ua.StatusCode
	}{
		{ua.ReadValueID{NodeID: f.id("Nope"), AttributeID: 13}, nil, status.BadNodeIDUnknown},
		{ua.ReadValueID{NodeID: ua.NodeID{}, AttributeID: 13}, nil, status.BadNodeIDUnknown},
		{ua.ReadValueID{NodeID: f.id("NoRead"), AttributeID: 13}, nil, status.BadNotReadable},
		{ua.ReadValueID{NodeID: f.id("NoRead"), AttributeID: 3}, nil, status.Good},
		{ua.ReadValueID{NodeID: f.id("Int"), AttributeID: 13}, denyAll{}, status.BadUserAccessDenied},
		{ua.ReadValueID{NodeID: f.id("Int"), AttributeID: 13}, ReadOnlyUser{}, status.Good},
		{ua.ReadValueID{NodeID: f.id("Int"), AttributeID: 13, IndexRange: "x"}, nil, status.BadIndexRangeInvalid},
		{ua.ReadValueID{NodeID: f.id("Int"), AttributeID: 13, IndexRange: "1"}, nil, status.BadIndexRangeNoData},
		{ua.ReadValueID{NodeID: f.id("Int"), AttributeID: 13, DataEncoding: ua.QualifiedName{Name: "Default Binary"}}, nil, status.BadDataEncodingInvalid},
		{ua.ReadValueID{NodeID: f.id("Status"), AttributeID: 13, DataEncoding: ua.QualifiedName{Name: "Default Binary"}}, nil, status.Good},
		{ua.ReadValueID{NodeID: f.id("Status"), AttributeID: 13, DataEncoding: ua.QualifiedName{Name: "Default XML"}}, nil, status.BadDataEncodingUnsupported},
		{ua.ReadValueID{NodeID: f.id("Status"), AttributeID: 13, DataEncoding: ua.QualifiedName{Name: "Default JSON"}}, nil, status.BadDataEncodingUnsupported},
		{ua.ReadValueID{NodeID: f.id("Status"), AttributeID: 13, DataEncoding: ua.QualifiedName{Name: "Other"}}, nil, status.BadDataEncodingInvalid},
		{ua.ReadValueID{NodeID: f.id("Status"), AttributeID: 3, DataEncoding: ua.QualifiedName{Name: "Default Binary"}}, nil, status.BadDataEncodingInvalid},
		{ua.ReadValueID{NodeID: f.id("Ext1"), AttributeID: 13}, denyAll{}, status.BadUserAccessDenied},
	} {
		rc := ReadContext{User: tc.user}
		var dv ua.DataValue
		f.s.Read(&rc, &tc.rv, ua.TimestampsToReturnBoth, &dv)
		if dv.Status != tc.want {
			t.Errorf("Read(%v attr %d range %q enc %v) = %v, want %v", tc.rv.NodeID, tc.rv.AttributeID, tc.rv.IndexRange, tc.rv.DataEncoding, dv.Status, tc.want)
		}
		if tc.want.IsBad() && (!dv.Value.IsNull() || !dv.ServerTimestamp.IsZero() || !dv.SourceTimestamp.IsZero()) {
			t.Errorf("failed Read left %+v", dv)
		}
	}
}

// denyAll is a user without rights.
type denyAll struct{}

func (denyAll) AccessLevel(*Node) uint8 { return 0 }
func (denyAll) WriteMask(*Node) uint32  { return 0 }
func (denyAll) Executable(*Node) bool   { return false }

func TestReadUserAttributes(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		node ua.NodeID
		attr ua.AttributeID
		user User
		want ua.Variant
	}{
		{f.id("Int"), ua.AttributeIDUserAccessLevel, ReadOnlyUser{}, ua.MustVariant(uint8(1))},
		{f.id("Int"), ua.AttributeIDUserAccessLevel, denyAll{}, ua.MustVariant(uint8(0))},
		{f.id("Plant"), ua.AttributeIDUserWriteMask, ReadOnlyUser{}, ua.MustVariant(uint32(0))},
		{f.id("Method"), ua.AttributeIDUserExecutable, ReadOnlyUser{}, ua.MustVariant(false)},
	} {
		rc := ReadContext{User: tc.user}
		var dv ua.DataValue
		f.s.Read(&rc, &ua.ReadValueID{NodeID: tc.node, AttributeID: uint32(tc.attr)}, ua.TimestampsToReturnNeither, &dv)
		if !dv.Value.Equal(tc.want) {
			t.Errorf("%v %v = %v, want %v", tc.node, tc.attr, dv.Value, tc.want)
		}
	}
}

func TestReadTimestamps(t *testing.T) {
	f := newFixture(t)
	src := testTime.Add(-time.Hour)
	for _, tc := range []struct {
		ts       ua.TimestampsToReturn
		src, srv bool
	}{
		{ua.TimestampsToReturnSource, true, false},
		{ua.TimestampsToReturnServer, false, true},
		{ua.TimestampsToReturnBoth, true, true},
		{ua.TimestampsToReturnNeither, false, false},
		{ua.TimestampsToReturnInvalid, false, false},
	} {
		var rc ReadContext
		var dv ua.DataValue
		f.s.Read(&rc, &ua.ReadValueID{NodeID: f.id("Int"), AttributeID: 13}, tc.ts, &dv)
		if got := dv.SourceTimestamp.Equal(src); got != tc.src || !tc.src && !dv.SourceTimestamp.IsZero() {
			t.Errorf("%v: source timestamp %v", tc.ts, dv.SourceTimestamp)
		}
		if got := dv.ServerTimestamp.Equal(testTime); got != tc.srv || !tc.srv && !dv.ServerTimestamp.IsZero() {
			t.Errorf("%v: server timestamp %v", tc.ts, dv.ServerTimestamp)
		}
		// Other attributes have no source timestamp.
		f.s.Read(&rc, &ua.ReadValueID{NodeID: f.id("Int"), AttributeID: 3}, tc.ts, &dv)
		if !dv.SourceTimestamp.IsZero() || dv.ServerTimestamp.Equal(testTime) != tc.srv {
			t.Errorf("%v: BrowseName timestamps %v %v", tc.ts, dv.SourceTimestamp, dv.ServerTimestamp)
		}
	}
}

func TestReadIndexRange(t *testing.T) {
	f := newFixture(t)
	m := func(vals []int32, dims ...int32) ua.Variant {
		v, err := ua.NewMatrix(vals, dims)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	nodata := status.BadIndexRangeNoData
	for _, tc := range []struct {
		node string
		rng  string
		want any // ua.Variant, Go value, or StatusCode
	}{
		{"Arr", "1", []float64{1}},
		{"Arr", "2:4", []float64{2, 3, 4}},
		{"Arr", "4:100", []float64{4, 5}},
		{"Arr", "5", []float64{5}},
		{"Arr", "6", nodata},
		{"Arr", "6:8", nodata},
		{"Arr", "1,1", nodata},
		{"Arr", "4:4", status.BadIndexRangeInvalid},
		{"Arr", "4:2", status.BadIndexRangeInvalid},
		{"Arr", " 1", status.BadIndexRangeInvalid},
		{"Arr", "1:", status.BadIndexRangeInvalid},
		{"Arr", ":1", status.BadIndexRangeInvalid},
		{"Arr", "1,", status.BadIndexRangeInvalid},
		{"Arr", "-1", status.BadIndexRangeInvalid},
		{"Arr", "99999999999", status.BadIndexRangeInvalid},
		{"Str", "1:3", "bcd"},
		{"Str", "5:9", "f"},
		{"Str", "6", nodata},
		{"Bytes", "0:1", []byte{1, 2}},
		{"Bytes", "3", []byte{4}},
		{"ByteArr", "1:2", ua.NewByteArray([]byte{8, 7})},
		{"Matrix", "1:2,0:1", m([]int32{4, 5, 8, 9}, 2, 2)},
		{"Matrix", "1,1", m([]int32{5}, 1, 1)},
		{"Matrix", "0:5,3", m([]int32{3, 7, 11}, 3, 1)},
		{"Matrix", "3,0", nodata},
		{"Matrix", "1", nodata},
		{"Strs", "1:2", []string{"beta", "gamma"}},
		{"Strs", "0:1,1:2", []string{"lp", "et"}},
		{"Strs", "0:2,3", []string{"h", "a", "m"}},
		{"Strs", "0:2,4", nodata},
		{"Int", "0", nodata},
		{"Any", "0", nodata},
		{"Ext0", "0", nodata},
	} {
		dv := f.read(f.id(tc.node), ua.AttributeIDValue, tc.rng)
		switch w := tc.want.(type) {
		case ua.StatusCode:
			if dv.Status != w {
				t.Errorf("%s[%s]: %v %v, want %v", tc.node, tc.rng, dv.Status, dv.Value, w)
			}
		default:
			v, ok := w.(ua.Variant)
			if !ok {
				v = ua.MustVariant(w)
			}
			if dv.Status != status.Good || !dv.Value.Equal(v) {
				t.Errorf("%s[%s]: %v %v, want %v", tc.node, tc.rng, dv.Status, dv.Value, v)
			}
		}
	}
	// IndexRange applies to other array and string attributes too.
	if dv := f.read(f.id("Arr"), ua.AttributeIDArrayDimensions, "0"); !dv.Value.Equal(ua.MustVariant([]uint32{0})) {
		t.Errorf("ArrayDimensions[0] = %v %v", dv.Status, dv.Value)
	}
	// The stored value is untouched.
	if dv := f.read(f.id("Arr"), ua.AttributeIDValue, ""); !dv.Value.Equal(ua.MustVariant([]float64{0, 1, 2, 3, 4, 5})) {
		t.Errorf("Arr = %v", dv.Value)
	}
}

func TestReadExternal(t *testing.T) {
	f := newFixture(t)
	var rc ReadContext
	var dv ua.DataValue
	f.s.Read(&rc, &ua.ReadValueID{NodeID: f.id("Ext2"), AttributeID: 13}, ua.TimestampsToReturnBoth, &dv)
	if x, _ := dv.Value.Int64(); x != 12 || dv.Status != status.Good || !dv.SourceTimestamp.Equal(testTime.Add(-time.Second)) {
		t.Errorf("Ext2 = %+v", dv)
	}
	// A handle the image lacks: the snapshot's status.
	if err := f.s.SetSource(f.id("Ext2"), f.sid, 99); err != nil {
		t.Fatal(err)
	}
	rc.Reset()
	f.s.Read(&rc, &ua.ReadValueID{NodeID: f.id("Ext2"), AttributeID: 13}, ua.TimestampsToReturnBoth, &dv)
	if dv.Status != status.BadNoCommunication {
		t.Errorf("Ext2 handle 99: %v", dv.Status)
	}
	// SourceFunc for a live value; SetValue for a static one.
	ct := nid(id.Server_ServerStatus_CurrentTime)
	if err := f.s.SetSource(ct, f.s.AddSource(SourceFunc(func(_ uint32, dv *ua.DataValue) {
		dv.Value.SetDateTime(testTime)
	})), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.s.SetValue(nid(id.Server_ServiceLevel), ua.MustVariant(uint8(255))); err != nil {
		t.Fatal(err)
	}
	rc.Reset()
	f.s.Read(&rc, &ua.ReadValueID{NodeID: ct, AttributeID: 13}, ua.TimestampsToReturnNeither, &dv)
	if tm, _ := dv.Value.DateTime(); !tm.Equal(testTime) {
		t.Errorf("CurrentTime = %v", dv.Value)
	}
	f.s.Read(&rc, &ua.ReadValueID{NodeID: nid(id.Server_ServiceLevel), AttributeID: 13}, ua.TimestampsToReturnSource, &dv)
	if x, _ := dv.Value.Uint8(); x != 255 || !dv.SourceTimestamp.Equal(testTime) {
		t.Errorf("ServiceLevel = %+v", dv)
	}
	if err := f.s.SetValue(nid(id.Server), ua.Variant{}); err == nil {
		t.Error("SetValue on an Object succeeded")
	}
	if err := f.s.SetSource(f.id("Int"), 99, 0); err == nil {
		t.Error("SetSource with an unknown source succeeded")
	}
}

// TestReadOneImage reads several external variables while a writer swaps
// images continuously: all values of one request must come from one
// image.
func TestReadOneImage(t *testing.T) {
	f := newFixture(t)
	const vars = 3
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for g := int64(1); !stop.Load(); g++ {
			vals := make([]int64, vars)
			for i := range vals {
				vals[i] = g*10 + int64(i)
			}
			f.src.cur.Store(&image{gen: g, vals: vals})
		}
	}()
	nodes := make([]ua.ReadValueID, 0, 30)
	for i := range 30 {
		nodes = append(nodes, ua.ReadValueID{NodeID: f.id([]string{"Ext0", "Ext1", "Ext2"}[i%vars]), AttributeID: 13})
	}
	results := make([]ua.DataValue, len(nodes))
	var rc ReadContext
	seen := map[int64]bool{}
	deadline := time.Now().Add(300 * time.Millisecond)
	for n := 0; n < 20000 && time.Now().Before(deadline); n++ {
		rc.Reset()
		for i := range nodes {
			f.s.Read(&rc, &nodes[i], ua.TimestampsToReturnNeither, &results[i])
		}
		x0, _ := results[0].Value.Int64()
		gen := x0 / 10
		seen[gen] = true
		for i := range results {
			x, _ := results[i].Value.Int64()
			if x != gen*10+int64(i%vars) {
				t.Fatalf("request %d mixes images: result %d is %d, result 0 is %d", n, i, x, x0)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if len(seen) < 2 {
		t.Logf("only %d images seen", len(seen))
	}
}

func TestReadAllocs(t *testing.T) {
	f := newFixture(t)
	var rc ReadContext
	var dv ua.DataValue
	for _, name := range []string{"Int", "Arr", "Str", "Ext1"} {
		rv := ua.ReadValueID{NodeID: f.id(name), AttributeID: uint32(ua.AttributeIDValue)}
		f.s.Read(&rc, &rv, ua.TimestampsToReturnBoth, &dv) // grow rc
		allocs := testing.AllocsPerRun(1000, func() {
			rc.Reset()
			f.s.Read(&rc, &rv, ua.TimestampsToReturnBoth, &dv)
		})
		if allocs != 0 {
			t.Errorf("Read of %s allocates %v times", name, allocs)
		}
	}
	// Numeric attributes too.
	rv := ua.ReadValueID{NodeID: f.id("Int"), AttributeID: uint32(ua.AttributeIDAccessLevel)}
	if allocs := testing.AllocsPerRun(1000, func() { f.s.Read(&rc, &rv, ua.TimestampsToReturnBoth, &dv) }); allocs != 0 {
		t.Errorf("Read of AccessLevel allocates %v times", allocs)
	}
}

func TestParseNumericRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		dims [][2]uint32
		err  bool
	}{
		{"", nil, false},
		{"0", [][2]uint32{{0, 0}}, false},
		{"6", [][2]uint32{{6, 6}}, false},
		{"5:7", [][2]uint32{{5, 7}}, false},
		{"1:2,0:1", [][2]uint32{{1, 2}, {0, 1}}, false},
		{"1,1", [][2]uint32{{1, 1}, {1, 1}}, false},
		{"4294967295", [][2]uint32{{4294967295, 4294967295}}, false},
		{"4294967296", nil, true},
		{"5:5", nil, true},
		{"7:5", nil, true},
		{"1 ", nil, true},
		{"a", nil, true},
		{",", nil, true},
		{"1,,2", nil, true},
		{"1:2:3", nil, true},
		{"1,2,3,4,5,6,7,8", [][2]uint32{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {7, 7}, {8, 8}}, false},
		{"1,2,3,4,5,6,7,8,9", nil, true},
	} {
		r, err := ParseNumericRange(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseNumericRange(%q) error %v", tc.in, err)
			continue
		}
		if err != nil {
			if err != status.BadIndexRangeInvalid {
				t.Errorf("ParseNumericRange(%q) error %v", tc.in, err)
			}
			continue
		}
		if r.Dims() != len(tc.dims) {
			t.Errorf("ParseNumericRange(%q) has %d dims", tc.in, r.Dims())
			continue
		}
		for i, d := range tc.dims {
			if lo, hi := r.Dim(i); lo != d[0] || hi != d[1] {
				t.Errorf("ParseNumericRange(%q) dim %d = %d:%d", tc.in, i, lo, hi)
			}
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { ParseNumericRange("1:2,0:1") }); allocs != 0 {
		t.Errorf("ParseNumericRange allocates %v times", allocs)
	}
}

func TestReadNoImageYet(t *testing.T) {
	f := newFixture(t)
	empty := f.s.AddSource(nilSource{})
	if err := f.s.SetSource(f.id("Ext0"), empty, 0); err != nil {
		t.Fatal(err)
	}
	if dv := f.read(f.id("Ext0"), ua.AttributeIDValue, ""); dv.Status != status.BadWaitingForInitialData {
		t.Errorf("Read before the first image: %v", dv.Status)
	}
}

// nilSource has no image yet.
type nilSource struct{}

func (nilSource) Snapshot() Snapshot { return nil }

// heldImages is a ValueSource whose snapshots count their holders: each
// Snapshot adds one, each Release takes one away.
type heldImages struct {
	imageSource
	held, taken int
}

type heldImage struct {
	*image
	src *heldImages
}

func (s *heldImages) Snapshot() Snapshot {
	s.held++
	s.taken++
	return heldImage{s.cur.Load(), s}
}

func (im heldImage) Release() { im.src.held-- }

// TestReadReleases: a ReadContext releases the snapshots it took at Done
// (and at Reset), one per source per request, and not those given to it
// with UseSnapshot.
func TestReadReleases(t *testing.T) {
	f := newFixture(t)
	src := &heldImages{}
	src.cur.Store(&image{vals: []int64{10, 11, 12}})
	sid := f.s.AddSource(src)
	if err := f.s.SetSource(f.id("Ext0"), sid, 0); err != nil {
		t.Fatal(err)
	}
	var rc ReadContext
	var dv ua.DataValue
	rv := ua.ReadValueID{NodeID: f.id("Ext0"), AttributeID: 13}
	for range 3 {
		f.s.Read(&rc, &rv, ua.TimestampsToReturnNeither, &dv)
	}
	if v, _ := dv.Value.Int64(); v != 10 || src.taken != 1 || src.held != 1 {
		t.Fatalf("value %v, %d snapshots taken, %d held; want 10, 1, 1", dv.Value, src.taken, src.held)
	}
	rc.Done()
	if src.held != 0 {
		t.Errorf("%d snapshots held after Done, want 0", src.held)
	}
	f.s.Read(&rc, &rv, ua.TimestampsToReturnNeither, &dv)
	rc.Reset()
	if src.taken != 2 || src.held != 0 {
		t.Errorf("after a Read and Reset: %d taken, %d held; want 2, 0", src.taken, src.held)
	}
	mine := src.Snapshot()
	f.s.Read(&rc, &rv, ua.TimestampsToReturnNeither, &dv) // takes one
	rc.UseSnapshot(f.s, sid, mine)                        // releases it, reads mine
	f.s.Read(&rc, &rv, ua.TimestampsToReturnNeither, &dv)
	rc.Done()
	if src.taken != 4 || src.held != 1 {
		t.Errorf("with UseSnapshot: %d taken, %d held; want 4, 1 (the caller's)", src.taken, src.held)
	}
}

// TestReadMany: ReadMany gives each operation what Read gives it, over
// more than one hold of the lock, clears a failed operation's result of
// what it held before, and allocates nothing.
func TestReadMany(t *testing.T) {
	f := newFixture(t)
	ops := []ua.ReadValueID{
		{NodeID: f.id("Int"), AttributeID: 13},
		{NodeID: f.id("Nope"), AttributeID: 13},
		{NodeID: f.id("Arr"), AttributeID: 13, IndexRange: "1:2"},
		{NodeID: f.id("NoRead"), AttributeID: 13},
		{NodeID: f.id("Ext1"), AttributeID: 13},
		{NodeID: f.id("Int"), AttributeID: 13, IndexRange: "x"},
		{NodeID: f.id("RO"), AttributeID: 3},
	}
	var rvs []ua.ReadValueID
	for len(rvs) < 2*readBatch+len(ops) {
		rvs = append(rvs, ops...)
	}
	out := make([]ua.DataValue, len(rvs))
	for i := range out {
		out[i] = ua.DataValue{Value: ua.MustVariant("stale"), Status: status.BadInternalError, ServerTimestamp: testTime}
	}
	var rc ReadContext
	f.s.ReadMany(&rc, rvs, ua.TimestampsToReturnBoth, out)
	var bad int
	for i := range rvs {
		var want ua.DataValue
		f.s.Read(&ReadContext{}, &rvs[i], ua.TimestampsToReturnBoth, &want)
		if !reflect.DeepEqual(out[i], want) {
			t.Errorf("ReadMany op %d (%v) = %+v, Read gives %+v", i, rvs[i].NodeID, out[i], want)
		}
		if want.Status.IsBad() {
			bad++
		}
	}
	if bad == 0 || bad == len(rvs) {
		t.Fatalf("%d of %d operations failed: the test needs both", bad, len(rvs))
	}
	good := rvs[:1]
	if allocs := testing.AllocsPerRun(1000, func() {
		rc.Reset()
		f.s.ReadMany(&rc, good, ua.TimestampsToReturnBoth, out)
	}); allocs != 0 {
		t.Errorf("ReadMany allocates %v times", allocs)
	}
}
