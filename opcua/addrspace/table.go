package addrspace

import (
	"iter"
	"math/bits"
	"math/rand/v2"

	"github.com/edged/edged/opcua/ua"
)

// nodeTable holds a Space's nodes by NodeID. Numeric and string ids,
// nearly all of them, are keyed by what identifies them (namespace and
// number; the string, in a map per namespace), so that a lookup hashes
// one word or one string, not the whole NodeID: a 100-node Read spent a
// third of its CPU hashing NodeIDs (docs/performance.md). GUID and
// opaque ids are keyed by the NodeID. A string id is also where a held
// Variable (AddVariable) is found, with the node holding it.
type nodeTable struct {
	numeric map[uint64]*Node // namespace<<32 | number
	text    textTable
	other   map[ua.NodeID]*Node
}

// slot is a string id's entry: a stored node (v nil), or held Variable v
// and n, the node holding it.
type slot struct {
	n *Node
	v *held
}

func newNodeTable(numeric int) nodeTable {
	return nodeTable{numeric: make(map[uint64]*Node, numeric), other: make(map[ua.NodeID]*Node)}
}

func numericKey(id *ua.NodeID) uint64 { return uint64(id.Namespace)<<32 | uint64(id.Numeric) }

// get returns the node with id, nil if there is none.
func (t *nodeTable) get(id ua.NodeID) *Node {
	switch id.Type {
	case ua.IDNumeric:
		return t.numeric[numericKey(&id)]
	case ua.IDString:
		if e := t.text.get(id.Namespace, id.Text); e.v == nil {
			return e.n
		}
		return nil
	default:
		return t.other[id]
	}
}

// getString returns the entry of string id text in namespace ns, zero if
// there is none.
func (t *nodeTable) getString(ns uint16, text string) slot {
	return t.text.get(ns, text)
}

// taken reports whether id names a stored node or a held Variable.
func (t *nodeTable) taken(id *ua.NodeID) bool {
	if id.Type == ua.IDString {
		return t.getString(id.Namespace, id.Text).n != nil
	}
	return t.get(*id) != nil
}

// putHeld adds held Variable v, of holder h, under its string id.
func (t *nodeTable) putHeld(h *Node, v *held) {
	t.text.put(slot{h, v})
}

// put adds or replaces n under n.ID.
func (t *nodeTable) put(n *Node) {
	switch n.ID.Type {
	case ua.IDNumeric:
		t.numeric[numericKey(&n.ID)] = n
	case ua.IDString:
		t.text.put(slot{n: n})
	default:
		t.other[n.ID] = n
	}
}

// del removes the node with id, if there is one.
func (t *nodeTable) del(id ua.NodeID) {
	switch id.Type {
	case ua.IDNumeric:
		delete(t.numeric, numericKey(&id))
	case ua.IDString:
		t.text.del(id.Namespace, id.Text)
	default:
		delete(t.other, id)
	}
}

// len returns the number of nodes, held Variables included.
func (t *nodeTable) len() int {
	return len(t.numeric) + len(t.other) + t.text.n
}

// all yields every stored node (not the held Variables), in no order.
func (t *nodeTable) all() iter.Seq2[ua.NodeID, *Node] {
	return func(yield func(ua.NodeID, *Node) bool) {
		for _, n := range t.numeric {
			if !yield(n.ID, n) {
				return
			}
		}
		for i, e := range t.text.slots {
			if t.text.tags[i] != 0 && e.v == nil && !yield(e.n.ID, e.n) {
				return
			}
		}
		for _, n := range t.other {
			if !yield(n.ID, n) {
				return
			}
		}
	}
}

// textTable holds the string ids of every namespace: an open-addressing
// table with linear probing, whose entries are their slots and a 32-bit
// hash, and whose keys are the entries' own (a held Variable's id, a
// node's NodeID): less memory a tag than a map[string]slot
// (BenchmarkMemoryPerTag; docs/performance.md).
type textTable struct {
	seed  uint64
	tags  []uint32 // an entry's hash, never 0; 0: empty
	slots []slot
	n     int
}

// key returns the namespace and string id of e.
func (e *slot) key() (uint16, string) {
	if e.v != nil {
		return e.n.ID.Namespace, e.v.id
	}
	return e.n.ID.Namespace, e.n.ID.Text
}

// hash is a seeded hash of (ns, text) in the way of wyhash: one 128-bit
// multiply folds 16 bytes, read as two (for short ids, overlapping)
// words. The keys are the Space's own ids; a lookup's key only picks
// where to start probing.
func (t *textTable) hash(ns uint16, text string) uint32 {
	const m1, m2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	n := len(text)
	h := t.seed ^ uint64(ns)<<48 ^ uint64(n)
	var a, b uint64
	switch {
	case n > 16:
		i := 0
		for ; i+16 < n; i += 16 {
			h = mix(le64(text[i:])^m1, le64(text[i+8:])^h)
		}
		a, b = le64(text[n-16:]), le64(text[n-8:])
	case n >= 8:
		a, b = le64(text), le64(text[n-8:])
	case n >= 4:
		a, b = uint64(le32(text)), uint64(le32(text[n-4:]))
	case n > 0:
		a = uint64(text[0])<<16 | uint64(text[n>>1])<<8 | uint64(text[n-1])
	}
	g := uint32(mix(a^m1, b^h^m2))
	if g == 0 {
		return 1
	}
	return g
}

// mix returns the xor of the halves of a×b.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// le64 returns the first 8 bytes of s as a little-endian word.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// le32 returns the first 4 bytes of s as a little-endian word.
func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// find returns the index of (ns, text)'s entry and true, or the empty
// index where it would go and false. The table must not be empty.
func (t *textTable) find(ns uint16, text string) (int, bool) {
	g := t.hash(ns, text)
	tags, slots := t.tags, t.slots[:len(t.tags)]
	mask := len(tags) - 1
	for i := int(g) & mask; ; i = (i + 1) & mask {
		switch tags[i] {
		case 0:
			return i, false
		case g:
			if e := &slots[i]; e.n.ID.Namespace == ns {
				if e.v != nil && e.v.id == text || e.v == nil && e.n.ID.Text == text {
					return i, true
				}
			}
		}
	}
}

// get returns the entry of (ns, text), zero if there is none.
func (t *textTable) get(ns uint16, text string) slot {
	if t.n == 0 {
		return slot{}
	}
	if i, ok := t.find(ns, text); ok {
		return t.slots[i]
	}
	return slot{}
}

// put adds e or replaces the entry of its key.
func (t *textTable) put(e slot) {
	if 4*(t.n+1) > 3*len(t.tags) {
		t.grow()
	}
	ns, text := e.key()
	i, ok := t.find(ns, text)
	if !ok {
		t.tags[i] = t.hash(ns, text)
		t.n++
	}
	t.slots[i] = e
}

// grow doubles the table (16 entries at first) and puts the entries back.
func (t *textTable) grow() {
	tags, slots := t.tags, t.slots
	size := 16
	if len(tags) > 0 {
		size = 2 * len(tags)
	} else {
		t.seed = rand.Uint64()
	}
	t.tags, t.slots = make([]uint32, size), make([]slot, size)
	mask := size - 1
	for j, g := range tags {
		if g == 0 {
			continue
		}
		i := int(g) & mask
		for t.tags[i] != 0 {
			i = (i + 1) & mask
		}
		t.tags[i], t.slots[i] = g, slots[j]
	}
}

// del removes the entry of (ns, text), if there is one, and moves back
// the entries after it in its run that can move nearer their place
// (deletion without markers).
func (t *textTable) del(ns uint16, text string) {
	if t.n == 0 {
		return
	}
	i, ok := t.find(ns, text)
	if !ok {
		return
	}
	t.n--
	mask := len(t.tags) - 1
	for j := (i + 1) & mask; t.tags[j] != 0; j = (j + 1) & mask {
		// The entry at j may fill the hole at i unless its place k lies
		// cyclically in (i, j].
		k := int(t.tags[j]) & mask
		if (i < j && (k <= i || k > j)) || (i > j && k <= i && k > j) {
			t.tags[i], t.slots[i] = t.tags[j], t.slots[j]
			i = j
		}
	}
	t.tags[i], t.slots[i] = 0, slot{}
}
