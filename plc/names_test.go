package plc

import "testing"

// A tag removed by one change and still absent in the next keeps its
// handle among the removed ones, and gets it back when it returns; a
// lookup finds only the tags in use, without allocating.
func TestTagNames(t *testing.T) {
	v1 := []Tag{{Device: "b", Name: "x"}, {Device: "a", Name: "y"}, {Device: "a", Name: "x"}}
	n1, dup := newTagNames(v1, nil)
	if dup != nil {
		t.Fatalf("dup %v", dup)
	}
	for h, tg := range v1 {
		if got, ok := n1.find(v1, tg.Device, tg.Name); !ok || got != Handle(h) {
			t.Errorf("find %s.%s: %d %v, want %d", tg.Device, tg.Name, got, ok, h)
		}
	}
	if _, ok := n1.find(v1, "a", "z"); ok {
		t.Error("found a.z")
	}
	if a := testing.AllocsPerRun(100, func() { n1.find(v1, "a", "y") }); a != 0 {
		t.Errorf("find: %v allocations", a)
	}

	v2 := []Tag{{Device: "b", Name: "x"}, {}, {Device: "a", Name: "x"}, {Device: "c", Name: "w"}} // a.y removed
	n2, _ := n1.next(v1, v2)
	if _, ok := n2.find(v2, "a", "y"); ok {
		t.Error("a.y found after its removal")
	}
	v3 := []Tag{{}, {}, {Device: "a", Name: "x"}, {Device: "c", Name: "w"}} // b.x removed too
	n3, _ := n2.next(v2, v3)
	for _, c := range []struct {
		dev, name string
		h         Handle
	}{{"a", "y", 1}, {"b", "x", 0}, {"a", "x", 2}, {"c", "w", 3}} {
		if h, ok := n3.handle(v3, c.dev, c.name); !ok || h != c.h {
			t.Errorf("handle %s.%s: %d %v, want %d", c.dev, c.name, h, ok, c.h)
		}
	}
	v4 := []Tag{{}, {Device: "a", Name: "y"}, {Device: "a", Name: "x"}, {Device: "c", Name: "w"}} // a.y back
	n4, _ := n3.next(v3, v4)
	if h, ok := n4.find(v4, "a", "y"); !ok || h != 1 {
		t.Errorf("a.y back: %d %v", h, ok)
	}
	if len(n4.removed) != 1 || n4.removed[tagKey("b", "x")] != 0 {
		t.Errorf("removed after a.y's return: %v", n4.removed)
	}

	if _, dup := newTagNames([]Tag{{Device: "a", Name: "x"}, {Device: "b", Name: "x"}, {Device: "a", Name: "x"}}, nil); dup == nil || dup.Device != "a" || dup.Name != "x" {
		t.Errorf("dup %v", dup)
	}
}
