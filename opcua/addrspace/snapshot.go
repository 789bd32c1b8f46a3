package addrspace

// SourceSnapshot returns the current snapshot of source id, nil for an
// unknown id or a source without an image yet. A caller that learns of a
// change (the binding's notify hook runs right after the engine published
// the image) takes the image that carried it, to read it later with
// ReadContext.UseSnapshot. It does not allocate.
func (s *Space) SourceSnapshot(id SourceID) Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i := int(id) - 1
	if i < 0 || i >= len(s.sources) {
		return nil
	}
	return s.sources[i].Snapshot()
}

// UseSnapshot makes the following operations of the request read source
// id from snap instead of the snapshot they would take, until the next
// Reset. A nil snap or an unknown id changes nothing. After the first
// requests it allocates nothing.
func (rc *ReadContext) UseSnapshot(s *Space, id SourceID, snap Snapshot) {
	if snap == nil || id == 0 {
		return
	}
	s.mu.RLock()
	n := len(s.sources)
	s.mu.RUnlock()
	i := int(id) - 1
	if i >= n {
		return
	}
	if i >= len(rc.snaps) {
		if cap(rc.snaps) >= n {
			rc.snaps = rc.snaps[:n]
		} else {
			rc.snaps = append(rc.snaps[:cap(rc.snaps)], make([]Snapshot, n-cap(rc.snaps))...)
		}
	}
	rc.snaps[i] = snap
}
