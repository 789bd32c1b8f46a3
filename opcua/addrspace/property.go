package addrspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/edged/edged/opcua/ua"
)

// Property is a static property held by its node (Node.Properties) rather
// than stored as a node of its own: the Space serves it as a read-only
// Variable of PropertyType, of DataType ns=0;i=DataType, with the NodeId
// (string, in its node's namespace) of its node followed by "." and
// Name.Name, the DisplayName Name.Name, a HasProperty reference from its
// node and a HasTypeDefinition to PropertyType. A node that has many of
// them (a gateway's tags) saves the few hundred bytes each of a node, its
// references and its entry in the node table.
type Property struct {
	Name  ua.QualifiedName // not empty, without "."
	Value ua.Variant       // not changed once the node is added

	since int64 // when it entered the space (Unix ns): its SourceTimestamp

	DataType uint32 // a DataType of namespace 0
}

// PropertySet serves properties that many held Variables have alike
// (VariableClass.Shared): the set's names and DataTypes, their values asked of
// it with the Variable's Handle when read instead of stored with each
// Variable. A gateway's tags, thousands of them, share a few such sets.
type PropertySet interface {
	// PropertyNames returns the names and DataTypes of the set's
	// properties, in order, the same each time; the Space does not
	// change them. The names follow the rules of Property.Name.
	PropertyNames() []PropertyName
	// PropertyValue returns the value of property i of the Variable with
	// handle, read-only. It must not block or allocate.
	PropertyValue(handle uint32, i int) ua.Variant
}

// PropertyName is the name and DataType of a property of a PropertySet.
type PropertyName struct {
	Name     ua.QualifiedName
	DataType uint32 // a DataType of namespace 0
}

// addProperties checks and completes the Properties of n, about to be
// added at time now.
func (s *Space) addProperties(n *Node, now time.Time) error {
	if len(n.Properties) == 0 {
		return nil
	}
	if n.ID.Type != ua.IDString {
		return fmt.Errorf("%w: %v: properties need a string NodeId", ErrInvalidNode, n.ID)
	}
	return s.checkProperties(n.ID.Namespace, n.ID.Text, n.Properties, nil, now)
}

// checkProperties checks and completes props, of the node with string id
// text in namespace ns, about to be added at time now, with the
// properties named shared after them (a held Variable's class's).
func (s *Space) checkProperties(ns uint16, text string, props []Property, shared []PropertyName, now time.Time) error {
	owner := ua.NewStringNodeID(ns, text)
	nameOf := func(i int) (ua.QualifiedName, uint32) {
		if i < len(props) {
			return props[i].Name, props[i].DataType
		}
		pn := &shared[i-len(props)]
		return pn.Name, pn.DataType
	}
	for i := range len(props) + len(shared) {
		name, dataType := nameOf(i)
		if name.Name == "" || strings.IndexByte(name.Name, '.') >= 0 {
			return fmt.Errorf("%w: %v: property name %q", ErrInvalidNode, owner, name.Name)
		}
		for j := range i {
			if other, _ := nameOf(j); other.Name == name.Name {
				return fmt.Errorf("%w: %v: property %q twice", ErrInvalidNode, owner, name.Name)
			}
		}
		if dt := s.nodes.get(ua.NewNumericNodeID(0, dataType)); dt == nil || dt.Class != ua.NodeClassDataType {
			return fmt.Errorf("%w: %v: property %s: DataType i=%d", ErrInvalidNode, owner, name.Name, dataType)
		}
		if id := ua.NewStringNodeID(ns, text+"."+name.Name); s.nodes.taken(&id) {
			return fmt.Errorf("%w: %v", ErrNodeExists, id)
		}
	}
	for i := range props {
		props[i].since = now.UnixNano()
	}
	return nil
}

// propertyID returns the NodeId of property p of the node with string id
// text in namespace ns. It allocates the string.
func propertyID(ns uint16, text string, p *Property) ua.NodeID {
	return ua.NewStringNodeID(ns, text+"."+p.Name.Name)
}

// heldProperty finds the property with id: the stored node holding it
// (owner, v nil), or the held Variable v holding it and v's holder
// (owner), and its index; owner is nil if there is none. It does not
// allocate.
func (s *Space) heldProperty(nid *ua.NodeID) (owner *Node, v *held, i int) {
	if nid.Type != ua.IDString {
		return nil, nil, 0
	}
	dot := strings.LastIndexByte(nid.Text, '.')
	if dot <= 0 {
		return nil, nil, 0
	}
	e := s.nodes.getString(nid.Namespace, nid.Text[:dot])
	if e.n == nil {
		return nil, nil, 0
	}
	name := nid.Text[dot+1:]
	if e.v != nil {
		for j := range e.v.numProps() {
			if e.v.propName(j) == name {
				return e.n, e.v, j
			}
		}
		return nil, nil, 0
	}
	props := e.n.Properties
	for j := range props {
		if props[j].Name.Name == name {
			return e.n, e.v, j
		}
	}
	return nil, nil, 0
}

// lookup returns the node with id: a stored one, or for a held Variable
// or a property a node made for the caller (with its references), nil if
// there is none.
func (s *Space) lookup(nid ua.NodeID) *Node {
	if nid.Type != ua.IDString {
		return s.nodes.get(nid)
	}
	if e := s.nodes.getString(nid.Namespace, nid.Text); e.v != nil {
		return s.heldNode(e.n, e.v)
	} else if e.n != nil {
		return e.n
	}
	owner, v, i := s.heldProperty(&nid)
	if owner == nil {
		return nil
	}
	var p Property
	if v != nil {
		owner = s.heldNode(owner, v)
		p = v.prop(i)
	} else {
		p = owner.Properties[i]
	}
	n := new(Node)
	s.propertyNode(propertyID(owner.ID.Namespace, owner.ID.Text, &p), &p, owner, n, new(ua.DataValue))
	n.refs = []ref{
		{typ: s.hasProperty, target: owner, inverse: true},
		{typ: s.hasTypeDefinition, target: s.propertyType},
	}
	return n
}

// lookupInto is lookup, making the node of a held Variable or a property
// in *scratch (a property's Value in *dv), without its references (what
// Read needs, without allocating). The node's ID may share the string of
// nid.
func (s *Space) lookupInto(nid *ua.NodeID, scratch *Node, dv *ua.DataValue) *Node {
	if nid.Type != ua.IDString {
		return s.nodes.get(*nid)
	}
	if e := s.nodes.getString(nid.Namespace, nid.Text); e.v != nil {
		s.variableNode(e.n, e.v, scratch)
		return scratch
	} else if e.n != nil {
		return e.n
	}
	owner, v, i := s.heldProperty(nid)
	if owner == nil {
		return nil
	}
	if v != nil {
		p := v.prop(i)
		s.propertyNode(*nid, &p, owner, scratch, dv)
	} else {
		s.propertyNode(*nid, &owner.Properties[i], owner, scratch, dv)
	}
	return scratch
}

// propertyNode fills n with property p, of NodeId id, of owner, but its
// references, and dv with its Value.
func (s *Space) propertyNode(id ua.NodeID, p *Property, owner *Node, n *Node, dv *ua.DataValue) {
	rank := int32(ValueRankScalar)
	if p.Value.IsArray() {
		rank = ValueRankOneDimension
	}
	*n = Node{
		ID:          id,
		Class:       ua.NodeClassVariable,
		BrowseName:  p.Name,
		DisplayName: ua.LocalizedText{Text: p.Name.Name},
		Value:       dv,
		DataType:    ua.NewNumericNodeID(0, p.DataType),
		ValueRank:   rank,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead),
		owner:       owner,
	}
	*dv = ua.DataValue{Value: p.Value, SourceTimestamp: time.Unix(0, p.since).UTC()}
}

// describeProperty fills rd, as describe does, for the HasProperty
// reference from owner to its property p.
func (s *Space) describeProperty(owner *Node, p *Property, mask uint32, rd *ua.ReferenceDescription) {
	m := ua.BrowseResultMask(mask)
	if m&ua.BrowseResultMaskReferenceTypeID != 0 {
		rd.ReferenceTypeID = s.hasProperty.ID
	}
	if m&ua.BrowseResultMaskIsForward != 0 {
		rd.IsForward = true
	}
	rd.NodeID.NodeID = propertyID(owner.ID.Namespace, owner.ID.Text, p)
	if m&ua.BrowseResultMaskNodeClass != 0 {
		rd.NodeClass = ua.NodeClassVariable
	}
	if m&ua.BrowseResultMaskBrowseName != 0 {
		rd.BrowseName = p.Name
	}
	if m&ua.BrowseResultMaskDisplayName != 0 {
		rd.DisplayName = ua.LocalizedText{Text: p.Name.Name}
	}
	if m&ua.BrowseResultMaskTypeDefinition != 0 {
		rd.TypeDefinition.NodeID = s.propertyType.ID
	}
}
