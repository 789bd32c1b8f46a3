package addrspace

import (
	"testing"

	"github.com/edged/edged/opcua/ua"
)

// The node table finds each kind of id under what identifies it, counts
// replaced nodes once, and forgets deleted ones.
func TestNodeTable(t *testing.T) {
	tab := newNodeTable(0)
	ids := []ua.NodeID{
		ua.NewNumericNodeID(0, 85),
		ua.NewNumericNodeID(3, 85),
		ua.NewStringNodeID(2, "Plant.Tag"),
		ua.NewStringNodeID(5, "Plant.Tag"),
		{Namespace: 1, Type: ua.IDGUID, GUID: ua.GUID{Data1: 7}},
		{Namespace: 1, Type: ua.IDOpaque, Text: "\x01\x02"},
	}
	for _, id := range ids {
		tab.put(&Node{ID: id})
	}
	tab.put(&Node{ID: ids[2]}) // a replacement
	if tab.len() != len(ids) {
		t.Fatalf("len %d, want %d", tab.len(), len(ids))
	}
	for _, id := range ids {
		if n := tab.get(id); n == nil || n.ID != id {
			t.Errorf("get(%v) = %v", id, n)
		}
	}
	for _, id := range []ua.NodeID{
		ua.NewNumericNodeID(0, 86),
		ua.NewNumericNodeID(1, 85),
		ua.NewStringNodeID(2, "Plant.Other"),
		ua.NewStringNodeID(3, "Plant.Tag"),
		ua.NewStringNodeID(60000, "Plant.Tag"),
		{Namespace: 1, Type: ua.IDGUID, GUID: ua.GUID{Data1: 8}},
		{Namespace: 1, Type: ua.IDOpaque, Text: "Plant.Tag"},
	} {
		if n := tab.get(id); n != nil {
			t.Errorf("get(%v) = %v, want none", id, n.ID)
		}
	}
	seen := 0
	for id, n := range tab.all() {
		if n.ID != id || tab.get(id) != n {
			t.Errorf("all yielded %v for %v", n.ID, id)
		}
		seen++
	}
	if seen != len(ids) {
		t.Errorf("all yielded %d nodes, want %d", seen, len(ids))
	}
	for i, id := range ids {
		tab.del(id)
		tab.del(id) // gone already: no change
		if tab.get(id) != nil || tab.len() != len(ids)-i-1 {
			t.Fatalf("after del(%v): get %v, len %d", id, tab.get(id), tab.len())
		}
	}
	tab.del(ua.NewStringNodeID(60000, "x")) // a namespace never used
}
