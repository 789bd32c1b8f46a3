package addrspace

import (
	"iter"

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
	numeric map[uint64]*Node  // namespace<<32 | number
	text    []map[string]slot // by namespace
	other   map[ua.NodeID]*Node
}

// slot is a string id's entry: a stored node (v nil), or held Variable v
// and n, the node holding it.
type slot struct {
	n *Node
	v *Variable
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
		if int(id.Namespace) < len(t.text) {
			if e := t.text[id.Namespace][id.Text]; e.v == nil {
				return e.n
			}
		}
		return nil
	default:
		return t.other[id]
	}
}

// getString returns the entry of string id text in namespace ns, zero if
// there is none.
func (t *nodeTable) getString(ns uint16, text string) slot {
	if int(ns) < len(t.text) {
		return t.text[ns][text]
	}
	return slot{}
}

// taken reports whether id names a stored node or a held Variable.
func (t *nodeTable) taken(id *ua.NodeID) bool {
	if id.Type == ua.IDString {
		return t.getString(id.Namespace, id.Text).n != nil
	}
	return t.get(*id) != nil
}

// textMap returns namespace ns's map of string ids, made if needed.
func (t *nodeTable) textMap(ns uint16) map[string]slot {
	for int(ns) >= len(t.text) {
		t.text = append(t.text, nil)
	}
	m := t.text[ns]
	if m == nil {
		m = make(map[string]slot)
		t.text[ns] = m
	}
	return m
}

// putHeld adds held Variable v, of holder h, under its string id.
func (t *nodeTable) putHeld(h *Node, v *Variable) {
	t.textMap(h.ID.Namespace)[v.id] = slot{h, v}
}

// put adds or replaces n under n.ID.
func (t *nodeTable) put(n *Node) {
	switch n.ID.Type {
	case ua.IDNumeric:
		t.numeric[numericKey(&n.ID)] = n
	case ua.IDString:
		t.textMap(n.ID.Namespace)[n.ID.Text] = slot{n: n}
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
		if int(id.Namespace) < len(t.text) {
			delete(t.text[id.Namespace], id.Text)
		}
	default:
		delete(t.other, id)
	}
}

// len returns the number of nodes, held Variables included.
func (t *nodeTable) len() int {
	n := len(t.numeric) + len(t.other)
	for _, m := range t.text {
		n += len(m)
	}
	return n
}

// all yields every stored node (not the held Variables), in no order.
func (t *nodeTable) all() iter.Seq2[ua.NodeID, *Node] {
	return func(yield func(ua.NodeID, *Node) bool) {
		for _, n := range t.numeric {
			if !yield(n.ID, n) {
				return
			}
		}
		for _, m := range t.text {
			for _, e := range m {
				if e.v == nil && !yield(e.n.ID, e.n) {
					return
				}
			}
		}
		for _, n := range t.other {
			if !yield(n.ID, n) {
				return
			}
		}
	}
}
