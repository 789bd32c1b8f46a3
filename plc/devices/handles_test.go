package devices

import (
	"testing"

	"github.com/edged/edged/plc"
)

func TestHandleMap(t *testing.T) {
	m := newHandleMap([]plc.BoundTag{{Handle: 12}, {Handle: 10}, {Handle: 15}})
	if len(m.index) != 6 {
		t.Errorf("table of %d entries for handles 10..15", len(m.index))
	}
	m.set(10, 0)
	m.set(15, 2)
	for h, want := range map[plc.Handle]int32{0: -1, 9: -1, 10: 0, 12: -1, 15: 2, 16: -1, 1 << 31: -1} {
		if got := m.get(h); got != want {
			t.Errorf("get(%d) = %d, want %d", h, got, want)
		}
	}
	empty := newHandleMap(nil)
	if got := empty.get(0); got != -1 {
		t.Errorf("empty map: get(0) = %d", got)
	}
}
