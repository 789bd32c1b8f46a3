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
// opaque ids are keyed by the NodeID.
type nodeTable struct {
	numeric map[uint64]*Node   // namespace<<32 | number
	text    []map[string]*Node // by namespace
	other   map[ua.NodeID]*Node
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
			return t.text[id.Namespace][id.Text]
		}
		return nil
	default:
		return t.other[id]
	}
}

// put adds or replaces n under n.ID.
func (t *nodeTable) put(n *Node) {
	switch n.ID.Type {
	case ua.IDNumeric:
		t.numeric[numericKey(&n.ID)] = n
	case ua.IDString:
		for int(n.ID.Namespace) >= len(t.text) {
			t.text = append(t.text, nil)
		}
		m := t.text[n.ID.Namespace]
		if m == nil {
			m = make(map[string]*Node)
			t.text[n.ID.Namespace] = m
		}
		m[n.ID.Text] = n
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

// len returns the number of nodes.
func (t *nodeTable) len() int {
	n := len(t.numeric) + len(t.other)
	for _, m := range t.text {
		n += len(m)
	}
	return n
}

// all yields every node, in no order.
func (t *nodeTable) all() iter.Seq2[ua.NodeID, *Node] {
	return func(yield func(ua.NodeID, *Node) bool) {
		for _, n := range t.numeric {
			if !yield(n.ID, n) {
				return
			}
		}
		for _, m := range t.text {
			for _, n := range m {
				if !yield(n.ID, n) {
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
