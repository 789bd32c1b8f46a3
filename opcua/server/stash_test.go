package server

import "testing"

func TestStash(t *testing.T) {
	s := newStash()
	b := s.get(100)
	if cap(b) < 100 || len(b) != 0 {
		t.Fatalf("get(100): len %d cap %d", len(b), cap(b))
	}
	b = append(b, "values"...)
	s.put(b)
	if c := s.get(50); len(c) != 0 || &c[:1][0] != &b[0] {
		t.Error("a buffer given back was not reused")
	}
	s.put(make([]byte, 10))
	if c := s.get(20); cap(c) < 20 {
		t.Errorf("get(20) returned cap %d", cap(c))
	}
	for range stashCount + 2 {
		s.put(make([]byte, 0, 64))
	}
	if len(s) != stashCount {
		t.Errorf("stash holds %d buffers, want at most %d", len(s), stashCount)
	}
	for len(s) > 0 {
		s.get(0)
	}
	s.put(make([]byte, 0, stashMax+1))
	if len(s) != 0 {
		t.Error("a buffer beyond stashMax was kept")
	}
}
