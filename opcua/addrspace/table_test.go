package addrspace

import (
	"fmt"
	"math/rand/v2"
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

// The string-id table agrees with a map through random puts, replacements
// and deletions, in tables small and full enough that runs wrap around
// and deletions move entries back.
func TestTextTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tab textTable
	want := map[ua.NodeID]slot{}
	holders := []*Node{{ID: ua.NewStringNodeID(2, "h")}, {ID: ua.NewStringNodeID(3, "h")}}
	for step := range 20000 {
		ns := uint16(2 + rng.IntN(2))
		text := fmt.Sprintf("Tag%d", rng.IntN(300))
		id := ua.NewStringNodeID(ns, text)
		switch op := rng.IntN(3); {
		case op == 0:
			tab.del(ns, text)
			delete(want, id)
		case rng.IntN(2) == 0:
			e := slot{n: &Node{ID: id}}
			tab.put(e)
			want[id] = e
		default:
			e := slot{holders[ns-2], &held{id: text}}
			tab.put(e)
			want[id] = e
		}
		if tab.n != len(want) {
			t.Fatalf("step %d: %d entries, want %d", step, tab.n, len(want))
		}
		if step%500 == 0 || step > 19900 {
			for i := range 300 {
				for ns := uint16(2); ns < 4; ns++ {
					text := fmt.Sprintf("Tag%d", i)
					if got, w := tab.get(ns, text), want[ua.NewStringNodeID(ns, text)]; got != w {
						t.Fatalf("step %d: get(%d, %q) = %v, want %v", step, ns, text, got, w)
					}
				}
			}
		}
	}
	if 4*tab.n > 3*len(tab.tags) {
		t.Errorf("%d entries in %d places", tab.n, len(tab.tags))
	}
}
