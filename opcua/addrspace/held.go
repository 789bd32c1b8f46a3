package addrspace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Variable is a scalar Variable held by its node (AddVariable) rather
// than stored as a node of its own, its value served by a ValueSource: a
// gateway's tag. The Space serves it as a Variable of
// BaseDataVariableType with the NodeId (string, in its holder's
// namespace) of its holder followed by "." and Name, the BrowseName Name
// in that namespace, the DisplayName Name, ValueRank Scalar, a
// HasComponent reference from its holder, a HasTypeDefinition to
// BaseDataVariableType and its Properties. It saves a gateway the node,
// the references and the table entry of each tag: about half of what a
// tag's Variable took.
type Variable struct {
	Name        string            // not empty, without "."
	Description *ua.LocalizedText // nil for none
	Properties  []Property
	// Class is what the Variable has alike with others; nil is the zero
	// VariableClass.
	Class       *VariableClass
	Source      SourceID // serves the value with Handle; not 0
	Handle      uint32
	DataType    uint32 // a DataType of namespace 0
	AccessLevel uint8
}

// held is a Variable as the Space keeps it (64 bytes, where Variable
// takes 96): its Name is the end of its NodeId's string, and its
// Properties, which few have, are behind a pointer.
type held struct {
	id       string // the NodeId's string: the holder's, ".", the Name
	desc     *ua.LocalizedText
	props    *[]Property // nil: none
	cls      *VariableClass
	since    int64 // when it entered the space (Unix ns): Shared's SourceTimestamp
	handle   uint32
	dataType uint32
	source   SourceID
	access   uint8
}

// name returns v's Name; h holds v.
func (v *held) name(h *Node) string { return v.id[len(h.ID.Text)+1:] }

// properties returns v's own properties (not Shared's).
func (v *held) properties() []Property {
	if v.props == nil {
		return nil
	}
	return *v.props
}

// VariableClass is what many held Variables have alike (a gateway's tags
// of one scan class), kept once for all of them: a held Variable takes
// 64 bytes with it. The Space does not change it.
type VariableClass struct {
	MinimumSamplingInterval float64
	// Sink, when set, receives the Writes of the Value (with the
	// Variable's Handle).
	Sink ValueSink
	// Shared, when set, serves more properties, after the Variable's
	// Properties.
	Shared PropertySet
	// Historizing is the Variables' Historizing attribute: they keep a
	// history, which HistoryRead reads (see HistoryTarget).
	// HistoryConfiguration, when not null, is the node their
	// HasHistoricalConfiguration reference points at (an Object of
	// HistoricalDataConfigurationType, shared by the Variables of the
	// class).
	Historizing          bool
	HistoryConfiguration ua.NodeID
}

// zeroClass is the class of a Variable without one.
var zeroClass VariableClass

// classOf returns class, the zero VariableClass for nil.
func classOf(class *VariableClass) *VariableClass {
	if class == nil {
		return &zeroClass
	}
	return class
}

// class returns v's class.
func (v *held) class() *VariableClass { return classOf(v.cls) }

// numProps returns the number of v's properties: its own, then Shared's.
func (v *held) numProps() int {
	n := len(v.properties())
	if sh := v.class().Shared; sh != nil {
		n += len(sh.PropertyNames())
	}
	return n
}

// propName returns the name of v's property i (below numProps).
func (v *held) propName(i int) string {
	props := v.properties()
	if i < len(props) {
		return props[i].Name.Name
	}
	return v.class().Shared.PropertyNames()[i-len(props)].Name.Name
}

// prop returns v's property i (below numProps), its value asked of Shared
// for one of Shared's.
func (v *held) prop(i int) Property {
	props := v.properties()
	if i < len(props) {
		return props[i]
	}
	i -= len(props)
	sh := v.class().Shared
	pn := &sh.PropertyNames()[i]
	return Property{Name: pn.Name, DataType: pn.DataType, Value: sh.PropertyValue(v.handle, i), since: v.since}
}

// Namespace-0 ids of held Variables.
const (
	idBaseDataVariableType       = 63
	idHasHistoricalConfiguration = 56
)

// AddVariable adds v, held by node holder, which must be stored (not
// itself a held Variable or a property) and have a string NodeId. v's
// NodeId and the ones of its Properties must be free; its Properties
// follow the rules of Node.Properties. The Space keeps a copy of v (v
// may be reused) and keeps v.Properties' array from now on. A held
// Variable cannot be the target of AddReference, nor changed with
// SetSource, SetSink or SetValue; RemoveNode removes it, and removing its
// holder removes it with it.
func (s *Space) AddVariable(holder ua.NodeID, v *Variable) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.nodes.get(holder)
	if h == nil {
		return fmt.Errorf("%w: %v", ErrUnknownNode, holder)
	}
	if holder.Type != ua.IDString {
		return fmt.Errorf("%w: %v: held variables need a string NodeId", ErrInvalidNode, holder)
	}
	if v.Name == "" || strings.IndexByte(v.Name, '.') >= 0 {
		return fmt.Errorf("%w: %v: variable name %q", ErrInvalidNode, holder, v.Name)
	}
	id := ua.NewStringNodeID(holder.Namespace, holder.Text+"."+v.Name)
	if s.nodes.taken(&id) {
		return fmt.Errorf("%w: %v", ErrNodeExists, id)
	}
	if owner, _, _ := s.heldProperty(&id); owner != nil {
		return fmt.Errorf("%w: %v (a property of %v)", ErrNodeExists, id, owner.ID)
	}
	if dt := s.nodes.get(ua.NewNumericNodeID(0, v.DataType)); dt == nil || dt.Class != ua.NodeClassDataType {
		return fmt.Errorf("%w: %v: DataType i=%d", ErrInvalidNode, id, v.DataType)
	}
	if v.Source == 0 || int(v.Source) > len(s.sources) {
		return fmt.Errorf("%w: %v: unknown source %d", ErrInvalidNode, id, v.Source)
	}
	now := s.clock()
	var shared []PropertyName
	if sh := classOf(v.Class).Shared; sh != nil {
		shared = sh.PropertyNames()
	}
	if err := s.checkProperties(id.Namespace, id.Text, v.Properties, shared, now); err != nil {
		return err
	}
	hv := &held{id: id.Text, desc: v.Description, cls: v.Class, since: now.UnixNano(),
		handle: v.Handle, dataType: v.DataType, source: v.Source, access: v.AccessLevel}
	if len(v.Properties) > 0 {
		props := v.Properties
		hv.props = &props
	}
	h.held = append(h.held, hv)
	h.refsVer++
	s.nodes.putHeld(h, hv)
	return nil
}

// removeHeld removes held Variable v of h.
func (s *Space) removeHeld(h *Node, v *held) {
	h.held = slices.DeleteFunc(h.held, func(w *held) bool { return w == v })
	h.refsVer++
	s.nodes.del(ua.NewStringNodeID(h.ID.Namespace, v.id))
}

// variableNode fills n with held Variable v of holder h, but its
// references. A node that holds a held Variable already (a ReadContext's
// scratch, read after read) gets only the fields in which two differ:
// writing the whole node each time made a Read of held Variables slower
// than one of stored nodes.
func (s *Space) variableNode(h *Node, v *held, n *Node) {
	if n.heldVar == nil {
		*n = Node{Class: ua.NodeClassVariable, ValueRank: ValueRankScalar, DataType: ua.NodeID{Type: ua.IDNumeric}}
	}
	n.ID = ua.NodeID{Namespace: h.ID.Namespace, Type: ua.IDString, Text: v.id}
	name := v.name(h)
	n.BrowseName = ua.QualifiedName{NamespaceIndex: h.ID.Namespace, Name: name}
	n.DisplayName.Text = name
	n.Description = ua.LocalizedText{}
	if v.desc != nil {
		n.Description = *v.desc
	}
	n.DataType.Numeric = v.dataType
	c := v.class()
	n.MinimumSamplingInterval = c.MinimumSamplingInterval
	n.Historizing = c.Historizing
	n.Source, n.Handle, n.AccessLevel = v.source, v.handle, v.access
	n.Sink = c.Sink
	n.Properties = v.properties() // Shared's: heldNode
	n.owner = h
	n.heldVar = v
}

// heldNode returns a node made for held Variable v of h, with its
// references, and all its properties in Properties.
func (s *Space) heldNode(h *Node, v *held) *Node {
	n := new(Node)
	s.variableNode(h, v, n)
	if v.class().Shared != nil {
		n.Properties = make([]Property, v.numProps())
		for i := range n.Properties {
			n.Properties[i] = v.prop(i)
		}
	}
	n.refs = []ref{
		{typ: s.hasComponent, target: h, inverse: true},
		{typ: s.hasTypeDefinition, target: s.baseDataVariableType},
	}
	if hc := v.class().HistoryConfiguration; !hc.IsNull() {
		if t := s.nodes.get(hc); t != nil {
			n.refs = append(n.refs, ref{typ: s.nodes.get(ua.NewNumericNodeID(0, idHasHistoricalConfiguration)), target: t})
		}
	}
	return n
}

// HistoryTarget returns the source and handle through which HistoryRead
// reads the history of variable id for user u: Bad_NodeIdUnknown for no
// node, Bad_HistoryOperationUnsupported for a node that is not a
// Variable keeping a history it serves (Historizing, with the HistoryRead
// bit in its AccessLevel, served by a source), Bad_UserAccessDenied when
// u lacks the HistoryRead right.
func (s *Space) HistoryTarget(id ua.NodeID, u User) (SourceID, uint32, ua.StatusCode) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var n Node
	if id.Type == ua.IDString {
		if e := s.nodes.getString(id.Namespace, id.Text); e.v != nil {
			s.variableNode(e.n, e.v, &n)
		} else if e.n != nil {
			n = *e.n
		} else if owner, _, _ := s.heldProperty(&id); owner != nil {
			return 0, 0, status.BadHistoryOperationUnsupported
		} else {
			return 0, 0, status.BadNodeIDUnknown
		}
	} else if p := s.nodes.get(id); p != nil {
		n = *p
	} else {
		return 0, 0, status.BadNodeIDUnknown
	}
	const histRead = uint8(ua.AccessLevelTypeHistoryRead)
	if n.Class != ua.NodeClassVariable || !n.Historizing || n.AccessLevel&histRead == 0 || n.Source == 0 {
		return 0, 0, status.BadHistoryOperationUnsupported
	}
	if u != nil && u.AccessLevel(&n)&histRead == 0 {
		return 0, 0, status.BadUserAccessDenied
	}
	return n.Source, n.Handle, status.Good
}

// describeHeld fills rd, as describe does, for the HasComponent reference
// from h to its held Variable v.
func (s *Space) describeHeld(h *Node, v *held, mask uint32, rd *ua.ReferenceDescription) {
	m := ua.BrowseResultMask(mask)
	if m&ua.BrowseResultMaskReferenceTypeID != 0 {
		rd.ReferenceTypeID = s.hasComponent.ID
	}
	if m&ua.BrowseResultMaskIsForward != 0 {
		rd.IsForward = true
	}
	rd.NodeID.NodeID = ua.NodeID{Namespace: h.ID.Namespace, Type: ua.IDString, Text: v.id}
	if m&ua.BrowseResultMaskNodeClass != 0 {
		rd.NodeClass = ua.NodeClassVariable
	}
	if m&ua.BrowseResultMaskBrowseName != 0 {
		rd.BrowseName = ua.QualifiedName{NamespaceIndex: h.ID.Namespace, Name: v.name(h)}
	}
	if m&ua.BrowseResultMaskDisplayName != 0 {
		rd.DisplayName = ua.LocalizedText{Text: v.name(h)}
	}
	if m&ua.BrowseResultMaskTypeDefinition != 0 {
		rd.TypeDefinition.NodeID = s.baseDataVariableType.ID
	}
}
