package devices

import "github.com/edged/edged/plc"

// handleMap maps the engine's handles of one device's tags to the
// device's own index of each: a table from its lowest handle to its
// highest, not from 0 (from 0, every device's table grew with the tags
// of all devices).
type handleMap struct {
	base  plc.Handle
	index []int32 // handle-base → index, -1 when not the device's
}

// newHandleMap returns the map of bound's handles, each to -1.
func newHandleMap(bound []plc.BoundTag) handleMap {
	if len(bound) == 0 {
		return handleMap{}
	}
	lo, hi := bound[0].Handle, bound[0].Handle
	for _, b := range bound[1:] {
		lo, hi = min(lo, b.Handle), max(hi, b.Handle)
	}
	m := handleMap{base: lo, index: make([]int32, hi-lo+1)}
	for i := range m.index {
		m.index[i] = -1
	}
	return m
}

// set maps h, one of the handles the map was made of, to i.
func (m *handleMap) set(h plc.Handle, i int32) { m.index[h-m.base] = i }

// get returns the index of h, -1 if none.
func (m *handleMap) get(h plc.Handle) int32 {
	if h < m.base || int(h-m.base) >= len(m.index) {
		return -1
	}
	return m.index[h-m.base]
}
