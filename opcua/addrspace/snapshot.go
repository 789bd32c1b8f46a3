package addrspace

// Source returns the ValueSource registered as id, nil for an unknown id.
// Sources are never unregistered, so a caller may keep it: the binding's
// notify hook takes the image that carried a change with its Snapshot,
// without the Space's lock, to read it later with
// ReadContext.UseSnapshot.
func (s *Space) Source(id SourceID) ValueSource {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i := int(id) - 1
	if i < 0 || i >= len(s.sources) {
		return nil
	}
	return s.sources[i]
}

// UseSnapshot makes the following operations of the request read source
// id from snap instead of the snapshot they would take, until the next
// Reset; snap stays the caller's to release. A nil snap or an unknown id
// changes nothing. After the first requests it allocates nothing.
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
		rc.grow(n)
	}
	if rc.snaps[i].taken {
		ReleaseSnapshot(rc.snaps[i].snap)
	}
	rc.snaps[i] = reqSnap{snap: snap}
}
