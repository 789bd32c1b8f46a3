package addrspace

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// testTime is the fixture's clock.
var testTime = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// image is a process image: an immutable slice of values.
type image struct {
	gen  int64
	vals []int64
	ts   time.Time
}

func (im *image) Value(h uint32, dv *ua.DataValue) {
	if int(h) >= len(im.vals) {
		dv.Status = status.BadNoCommunication
		return
	}
	dv.Value.SetInt64(im.vals[h])
	dv.SourceTimestamp = im.ts
}

// imageSource is a ValueSource whose writer swaps images.
type imageSource struct{ cur atomic.Pointer[image] }

func (s *imageSource) Snapshot() Snapshot { return s.cur.Load() }

// sinkRecorder is a ValueSink that records writes; with pending set it
// answers each write later, through that channel.
type sinkRecorder struct {
	h       uint32
	got     ua.Variant
	n       int
	pending chan ua.StatusCode
}

func (r *sinkRecorder) WriteValue(h uint32, wv *ua.WriteValue) (ua.StatusCode, Pending) {
	r.h, r.got, r.n = h, wv.Value.Value, r.n+1
	if r.pending != nil {
		return status.Good, r.pending
	}
	return status.Good, nil
}

// fixture is a Space with namespace 1 holding test nodes.
type fixture struct {
	s   *Space
	ns  uint16
	src *imageSource
	sid SourceID
}

func (f *fixture) id(name string) ua.NodeID { return ua.NewStringNodeID(f.ns, name) }

func mkRef(typ uint32, target ua.NodeID, inverse bool) Reference {
	return Reference{TypeID: nid(typ), IsInverse: inverse, Target: ua.ExpandedNodeID{NodeID: target}}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{s: New()}
	f.s.SetClock(func() time.Time { return testTime })
	f.ns = f.s.AddNamespace("urn:edged:test")
	f.src = &imageSource{}
	f.src.cur.Store(&image{vals: []int64{10, 11, 12}, ts: testTime.Add(-time.Second)})
	f.sid = f.s.AddSource(f.src)
	rw := uint8(ua.AccessLevelTypeCurrentRead | ua.AccessLevelTypeCurrentWrite)
	add := func(n *Node, refs ...Reference) {
		t.Helper()
		if err := f.s.AddNode(n, refs...); err != nil {
			t.Fatal(err)
		}
	}
	qn := func(s string) ua.QualifiedName { return ua.QualifiedName{NamespaceIndex: f.ns, Name: s} }
	matrix, _ := ua.NewMatrix([]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, []int32{3, 4})
	add(&Node{ID: f.id("Plant"), Class: ua.NodeClassObject, BrowseName: qn("Plant"), WriteMask: uint32(ua.AttributeWriteMaskDisplayName)},
		mkRef(id.Organizes, nid(id.ObjectsFolder), true), mkRef(id.HasTypeDefinition, nid(id.FolderType), false))
	add(&Node{ID: f.id("Int"), Class: ua.NodeClassVariable, BrowseName: qn("Int"), DataType: nid(id.Int32),
		ValueRank: ValueRankScalar, AccessLevel: rw, Value: &ua.DataValue{Value: ua.MustVariant(int32(7)), SourceTimestamp: testTime.Add(-time.Hour)}},
		mkRef(id.HasComponent, f.id("Plant"), true), mkRef(id.HasTypeDefinition, nid(id.BaseDataVariableType), false))
	add(&Node{ID: f.id("RO"), Class: ua.NodeClassVariable, BrowseName: qn("RO"), DataType: nid(id.Double),
		ValueRank: ValueRankScalar, AccessLevel: 1, Value: &ua.DataValue{Value: ua.MustVariant(1.5)}},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("NoRead"), Class: ua.NodeClassVariable, BrowseName: qn("NoRead"), DataType: nid(id.Double),
		ValueRank: ValueRankScalar, AccessLevel: 0},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("Arr"), Class: ua.NodeClassVariable, BrowseName: qn("Arr"), DataType: nid(id.Double),
		ValueRank: 1, ArrayDimensions: []uint32{0}, AccessLevel: rw, Value: &ua.DataValue{Value: ua.MustVariant([]float64{0, 1, 2, 3, 4, 5})}},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("Str"), Class: ua.NodeClassVariable, BrowseName: qn("Str"), DataType: nid(id.String),
		ValueRank: ValueRankScalar, AccessLevel: rw, Value: &ua.DataValue{Value: ua.MustVariant("abcdef")}},
		mkRef(id.HasProperty, f.id("Plant"), true), mkRef(id.HasTypeDefinition, nid(id.PropertyType), false))
	add(&Node{ID: f.id("Bytes"), Class: ua.NodeClassVariable, BrowseName: qn("Bytes"), DataType: nid(id.ByteString),
		ValueRank: ValueRankScalar, AccessLevel: rw, Value: &ua.DataValue{Value: ua.MustVariant([]byte{1, 2, 3, 4})}},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("Matrix"), Class: ua.NodeClassVariable, BrowseName: qn("Matrix"), DataType: nid(id.Int32),
		ValueRank: 2, ArrayDimensions: []uint32{3, 4}, AccessLevel: rw, Value: &ua.DataValue{Value: matrix}},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("Strs"), Class: ua.NodeClassVariable, BrowseName: qn("Strs"), DataType: nid(id.String),
		ValueRank: 1, AccessLevel: rw, Value: &ua.DataValue{Value: ua.MustVariant([]string{"alpha", "beta", "gamma"})}},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("Any"), Class: ua.NodeClassVariable, BrowseName: qn("Any"), DataType: nid(id.BaseDataType),
		ValueRank: ValueRankAny, AccessLevel: rw},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("Num"), Class: ua.NodeClassVariable, BrowseName: qn("Num"), DataType: nid(id.Number),
		ValueRank: ValueRankScalarOrOneDimension, AccessLevel: rw, Value: &ua.DataValue{Value: ua.MustVariant(int16(1))}},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("Time"), Class: ua.NodeClassVariable, BrowseName: qn("Time"), DataType: nid(id.UtcTime),
		ValueRank: ValueRankScalar, AccessLevel: rw | uint8(ua.AccessLevelTypeStatusWrite|ua.AccessLevelTypeTimestampWrite)},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("State"), Class: ua.NodeClassVariable, BrowseName: qn("State"), DataType: nid(id.ServerState),
		ValueRank: ValueRankScalar, AccessLevel: rw},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("Status"), Class: ua.NodeClassVariable, BrowseName: qn("Status"), DataType: nid(id.BuildInfo),
		ValueRank: ValueRankScalar, AccessLevel: rw},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("ByteArr"), Class: ua.NodeClassVariable, BrowseName: qn("ByteArr"), DataType: nid(id.Byte),
		ValueRank: 1, AccessLevel: rw, Value: &ua.DataValue{Value: ua.NewByteArray([]byte{9, 8, 7})}},
		mkRef(id.HasComponent, f.id("Plant"), true))
	for i, name := range []string{"Ext0", "Ext1", "Ext2"} {
		add(&Node{ID: f.id(name), Class: ua.NodeClassVariable, BrowseName: qn(name), DataType: nid(id.Int64),
			ValueRank: ValueRankScalar, AccessLevel: rw, Source: f.sid, Handle: uint32(i)},
			mkRef(id.HasComponent, f.id("Plant"), true))
	}
	add(&Node{ID: f.id("Method"), Class: ua.NodeClassMethod, BrowseName: qn("Method"), Executable: true},
		mkRef(id.HasComponent, f.id("Plant"), true))
	add(&Node{ID: f.id("View"), Class: ua.NodeClassView, BrowseName: qn("View"), ContainsNoLoops: true, EventNotifier: 1},
		mkRef(id.Organizes, nid(id.ViewsFolder), true))
	add(&Node{ID: f.id("MyType"), Class: ua.NodeClassObjectType, BrowseName: qn("MyType"), IsAbstract: true},
		mkRef(id.HasSubtype, nid(id.BaseObjectType), true))
	add(&Node{ID: f.id("MyVarType"), Class: ua.NodeClassVariableType, BrowseName: qn("MyVarType"), DataType: nid(id.Int32),
		ValueRank: ValueRankScalar, Value: &ua.DataValue{Value: ua.MustVariant(int32(3))}},
		mkRef(id.HasSubtype, nid(id.BaseDataVariableType), true))
	add(&Node{ID: f.id("MyRef"), Class: ua.NodeClassReferenceType, BrowseName: qn("MyRef"),
		InverseName: &ua.LocalizedText{Text: "MyRefOf"}},
		mkRef(id.HasSubtype, nid(id.HasComponent), true))
	add(&Node{ID: f.id("MyData"), Class: ua.NodeClassDataType, BrowseName: qn("MyData")},
		mkRef(id.HasSubtype, nid(id.Int32), true))
	add(&Node{ID: f.id("Remote"), Class: ua.NodeClassObject, BrowseName: qn("Remote")},
		mkRef(id.Organizes, f.id("Plant"), true),
		Reference{TypeID: nid(id.Organizes), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, 99), ServerIndex: 2}})
	if err := f.s.AddReference(f.id("Plant"), f.id("MyRef"), ua.ExpandedNodeID{NodeID: f.id("Int")}); err != nil {
		t.Fatal(err)
	}
	return f
}
