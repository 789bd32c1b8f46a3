package plc

import (
	"slices"
	"sort"
	"strings"
)

// tagNames finds a tag's handle by device and name: the handles of the
// tags in use sorted by device and name, searched in the tags (4 bytes a
// tag; a map by "device\x00name" takes many more with its keys), and the
// handles of tags a Reconfigure removed, by tagKey, which one added again
// gets back (a few, usually none). Replaced whole, never changed.
type tagNames struct {
	sorted  []Handle
	removed map[string]Handle
}

// newTagNames indexes the tags in use of tags (Device not ""), and
// removed. The first of two tags of the same device and name is dup.
func newTagNames(tags []Tag, removed map[string]Handle) (n *tagNames, dup *Tag) {
	n = &tagNames{removed: removed}
	for h := range tags {
		if tags[h].Device != "" {
			n.sorted = append(n.sorted, Handle(h))
		}
	}
	slices.SortFunc(n.sorted, func(a, b Handle) int {
		if c := compareName(&tags[a], tags[b].Device, tags[b].Name); c != 0 {
			return c
		}
		return int(a) - int(b)
	})
	for i := 1; i < len(n.sorted); i++ {
		if t := &tags[n.sorted[i]]; compareName(&tags[n.sorted[i-1]], t.Device, t.Name) == 0 {
			return n, t
		}
	}
	return n, nil
}

// compareName orders t against the tag device.name.
func compareName(t *Tag, device, name string) int {
	if c := strings.Compare(t.Device, device); c != 0 {
		return c
	}
	return strings.Compare(t.Name, name)
}

// find returns the handle of the tag in use device.name of tags, the
// tags n indexes. It does not allocate.
func (n *tagNames) find(tags []Tag, device, name string) (Handle, bool) {
	i := sort.Search(len(n.sorted), func(i int) bool { return compareName(&tags[n.sorted[i]], device, name) >= 0 })
	if i < len(n.sorted) && compareName(&tags[n.sorted[i]], device, name) == 0 {
		return n.sorted[i], true
	}
	return 0, false
}

// handle returns the handle that device.name has or had: in use, or
// removed.
func (n *tagNames) handle(tags []Tag, device, name string) (Handle, bool) {
	if h, ok := n.find(tags, device, name); ok {
		return h, true
	}
	h, ok := n.removed[tagKey(device, name)]
	return h, ok
}

// next returns the index of the tags of next, which replace prev (whose
// index is n): the handles of the tags prev had and next has not join
// the removed ones, and those next has again leave them.
func (n *tagNames) next(prev, next []Tag) (*tagNames, *Tag) {
	removed := map[string]Handle{}
	for k, h := range n.removed {
		if next[h].Device == "" {
			removed[k] = h
		}
	}
	for h := range prev {
		if t := &prev[h]; t.Device != "" && next[h].Device == "" {
			removed[tagKey(t.Device, t.Name)] = Handle(h)
		}
	}
	if len(removed) == 0 {
		removed = nil
	}
	return newTagNames(next, removed)
}
