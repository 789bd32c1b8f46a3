package addrspace

import (
	"fmt"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// BenchmarkNew measures building the space with namespace 0, as at
// startup.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		New()
	}
}

func benchmarkRead(b *testing.B, n int, external bool) {
	f := newFixture(b)
	nodes := make([]ua.ReadValueID, n)
	for i := range nodes {
		name := fmt.Sprintf("V%d", i)
		node := &Node{ID: f.id(name), Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{NamespaceIndex: f.ns, Name: name},
			DataType: nid(id.Int64), ValueRank: ValueRankScalar, AccessLevel: 1, Value: pval(int64(i))}
		if external {
			node.Source, node.Handle = f.sid, uint32(i%3)
		}
		if err := f.s.AddNode(node, mkRef(id.HasComponent, f.id("Plant"), true)); err != nil {
			b.Fatal(err)
		}
		nodes[i] = ua.ReadValueID{NodeID: f.id(name), AttributeID: uint32(ua.AttributeIDValue)}
	}
	results := make([]ua.DataValue, n)
	var rc ReadContext
	b.ReportAllocs()
	for b.Loop() {
		rc.Reset()
		for i := range nodes {
			f.s.Read(&rc, &nodes[i], ua.TimestampsToReturnBoth, &results[i])
		}
	}
}

// benchmarkReadHeld reads n Variables held by "Plant", as the binding's
// tags are, one Read each or with one ReadMany.
func benchmarkReadHeld(b *testing.B, n int, many bool) {
	f := newFixture(b)
	nodes := make([]ua.ReadValueID, n)
	for i := range nodes {
		name := fmt.Sprintf("V%d", i)
		if err := f.s.AddVariable(f.id("Plant"), &Variable{Name: name, DataType: id.Int64, AccessLevel: 1, Source: f.sid, Handle: uint32(i % 3)}); err != nil {
			b.Fatal(err)
		}
		nodes[i] = ua.ReadValueID{NodeID: f.id("Plant." + name), AttributeID: uint32(ua.AttributeIDValue)}
	}
	results := make([]ua.DataValue, n)
	var rc ReadContext
	b.ReportAllocs()
	for b.Loop() {
		rc.Reset()
		if many {
			f.s.ReadMany(&rc, nodes, ua.TimestampsToReturnBoth, results)
			continue
		}
		for i := range nodes {
			f.s.Read(&rc, &nodes[i], ua.TimestampsToReturnBoth, &results[i])
		}
	}
}

func BenchmarkRead100Held(b *testing.B) { benchmarkReadHeld(b, 100, false) }

// BenchmarkReadMany100Held reads them as the Read service does.
func BenchmarkReadMany100Held(b *testing.B) { benchmarkReadHeld(b, 100, true) }

func BenchmarkRead1(b *testing.B)           { benchmarkRead(b, 1, false) }
func BenchmarkRead100(b *testing.B)         { benchmarkRead(b, 100, false) }
func BenchmarkRead1External(b *testing.B)   { benchmarkRead(b, 1, true) }
func BenchmarkRead100External(b *testing.B) { benchmarkRead(b, 100, true) }

func BenchmarkBrowseServer(b *testing.B) {
	s := New()
	d := ua.BrowseDescription{NodeID: nid(id.Server), BrowseDirection: ua.BrowseDirectionBoth, ReferenceTypeID: nid(id.References),
		IncludeSubtypes: true, ResultMask: uint32(ua.BrowseResultMaskAll)}
	var res ua.BrowseResult
	var c BrowseCursor
	b.ReportAllocs()
	for b.Loop() {
		s.Browse(&d, 0, &res, &c)
	}
	b.ReportMetric(float64(len(res.References)), "refs")
}

func BenchmarkTranslateBrowsePath(b *testing.B) {
	s := New()
	bp := ua.BrowsePath{StartingNode: nid(id.ObjectsFolder), RelativePath: ua.RelativePath{Elements: []ua.RelativePathElement{
		{ReferenceTypeID: nid(id.HierarchicalReferences), IncludeSubtypes: true, TargetName: ua.QualifiedName{Name: "Server"}},
		{ReferenceTypeID: nid(id.HasComponent), TargetName: ua.QualifiedName{Name: "ServerStatus"}},
		{ReferenceTypeID: nid(id.HasComponent), TargetName: ua.QualifiedName{Name: "CurrentTime"}},
	}}}
	var res ua.BrowsePathResult
	b.ReportAllocs()
	for b.Loop() {
		s.TranslateBrowsePath(&bp, &res)
	}
}
