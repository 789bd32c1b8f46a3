package addrspace

import "github.com/edged/edged/opcua/ua"

// ns0Node is one node of the generated namespace-0 table (zz_ns0.go).
// Strings are indexes into the string table, value an index for ns0Value
// (0: none), dims an index into ns0Dims; the node's references are
// ns0Refs[firstRef:firstRef+refs].
type ns0Node struct {
	id            uint32
	class         uint8
	flags         uint8
	accessLevel   uint8
	eventNotifier uint8
	valueRank     int8
	browseName    uint16
	displayName   uint16
	description   uint16
	inverseName   uint16
	dataType      uint32
	dims          uint16
	minSampling   int32
	value         uint16
	firstRef      uint32
	refs          uint16
}

// Bits of ns0Node.flags.
const (
	ns0Abstract    = 1 << 0
	ns0Symmetric   = 1 << 1
	ns0Historizing = 1 << 2
	ns0NoLoops     = 1 << 3
	ns0Executable  = 1 << 4
)

// ns0Ref is a reference of the generated table, as seen from its node.
type ns0Ref struct {
	typ     uint32
	target  uint32
	inverse bool
}

// ns0Arg is an Argument (OPC 10000-3 §8.6) of the generated table: name
// and description index the string table, dims ns0Dims; dataType is a
// node of namespace 0.
type ns0Arg struct {
	name        uint16
	description uint16
	dims        uint16
	valueRank   int8
	dataType    uint32
}

// ns0ArgProp is an InputArguments or OutputArguments property of the
// generated table, node id, whose value holds ns0Args[first:first+n].
type ns0ArgProp struct {
	id    uint32
	first uint16
	n     uint8
}

// ns0Str returns string i of the string table, sharing its bytes.
func ns0Str(i uint16) string {
	if i == 0 {
		return ""
	}
	return ns0StrData[ns0StrEnd[i-1]:ns0StrEnd[i]]
}

// loadNS0 fills s with namespace 0: one allocation for the nodes, one for
// the references, two for the methods' Arguments, and the default values.
func loadNS0(s *Space) {
	nodes := make([]Node, ns0NodeCount)
	byID := func(id uint32) *Node {
		return s.nodes.get(ua.NewNumericNodeID(0, id))
	}
	for i := range ns0Nodes {
		t := &ns0Nodes[i]
		n := &nodes[i]
		*n = Node{
			ID:          ua.NewNumericNodeID(0, t.id),
			Class:       ua.NodeClass(t.class),
			BrowseName:  ua.QualifiedName{Name: ns0Str(t.browseName)},
			DisplayName: ua.LocalizedText{Text: ns0Str(t.displayName)},
			Description: ua.LocalizedText{Text: ns0Str(t.description)},

			AccessLevel:             t.accessLevel,
			EventNotifier:           t.eventNotifier,
			ValueRank:               int32(t.valueRank),
			MinimumSamplingInterval: float64(t.minSampling),
			ArrayDimensions:         ns0Dims[t.dims],
			IsAbstract:              t.flags&ns0Abstract != 0,
			Symmetric:               t.flags&ns0Symmetric != 0,
			Historizing:             t.flags&ns0Historizing != 0,
			ContainsNoLoops:         t.flags&ns0NoLoops != 0,
			Executable:              t.flags&ns0Executable != 0,
		}
		if t.dataType != 0 {
			n.DataType = ua.NewNumericNodeID(0, t.dataType)
		}
		if inv := ns0Str(t.inverseName); inv != "" {
			n.InverseName = &ua.LocalizedText{Text: inv}
		}
		if t.value != 0 {
			n.Value = &ua.DataValue{Value: ns0Value(int(t.value))}
		}
		s.nodes.put(n)
	}
	refs := make([]ref, ns0RefCount)
	for i := range ns0Nodes {
		t := &ns0Nodes[i]
		n := &nodes[i]
		// A full slice expression, so that a later append to n.refs copies
		// instead of overwriting the next node's references.
		n.refs = refs[t.firstRef : t.firstRef+uint32(t.refs) : t.firstRef+uint32(t.refs)]
		for j, r := range ns0Refs[t.firstRef : t.firstRef+uint32(t.refs)] {
			n.refs[j] = ref{typ: byID(r.typ), target: byID(r.target), inverse: r.inverse}
			if r.typ == idHasSubtype && r.inverse {
				n.super = n.refs[j].target
			}
		}
	}
	loadNS0Args(s)
}

// loadNS0Args gives the InputArguments and OutputArguments properties of
// namespace 0 their values, arrays of ExtensionObjects with Argument
// bodies. The properties' arrays share two backing arrays, sliced with a
// full slice expression each.
func loadNS0Args(s *Space) {
	args := make([]ua.Argument, ns0ArgCount)
	eos := make([]ua.ExtensionObject, ns0ArgCount)
	for i := range ns0Args {
		t := &ns0Args[i]
		args[i] = ua.Argument{
			Name:            ns0Str(t.name),
			DataType:        ua.NewNumericNodeID(0, t.dataType),
			ValueRank:       int32(t.valueRank),
			ArrayDimensions: ns0Dims[t.dims],
			Description:     ua.LocalizedText{Text: ns0Str(t.description)},
		}
		eos[i].Body = &args[i]
	}
	for _, p := range ns0ArgProps {
		end := int(p.first) + int(p.n)
		s.nodes.get(ua.NewNumericNodeID(0, p.id)).Value = &ua.DataValue{Value: ua.MustVariant(eos[p.first:end:end])}
	}
}
