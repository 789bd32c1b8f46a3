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

	id    string // the NodeId's string, set by AddNode
	since int64  // when it entered the space (Unix ns): its SourceTimestamp

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
	for i := range n.Properties {
		p := &n.Properties[i]
		if p.Name.Name == "" || strings.IndexByte(p.Name.Name, '.') >= 0 {
			return fmt.Errorf("%w: %v: property name %q", ErrInvalidNode, n.ID, p.Name.Name)
		}
		for j := range i {
			if n.Properties[j].Name.Name == p.Name.Name {
				return fmt.Errorf("%w: %v: property %q twice", ErrInvalidNode, n.ID, p.Name.Name)
			}
		}
		if dt := s.nodes.get(ua.NewNumericNodeID(0, p.DataType)); dt == nil || dt.Class != ua.NodeClassDataType {
			return fmt.Errorf("%w: %v: property %s: DataType i=%d", ErrInvalidNode, n.ID, p.Name.Name, p.DataType)
		}
		p.id = n.ID.Text + "." + p.Name.Name
		if s.nodes.get(ua.NewStringNodeID(n.ID.Namespace, p.id)) != nil {
			return fmt.Errorf("%w: %v", ErrNodeExists, ua.NewStringNodeID(n.ID.Namespace, p.id))
		}
		p.since = now.UnixNano()
	}
	return nil
}

// heldProperty returns the node holding the property with id, and its index,
// or nil. It does not allocate.
func (s *Space) heldProperty(nid *ua.NodeID) (*Node, int) {
	if nid.Type != ua.IDString {
		return nil, 0
	}
	i := strings.LastIndexByte(nid.Text, '.')
	if i <= 0 {
		return nil, 0
	}
	owner := s.nodes.get(ua.NodeID{Namespace: nid.Namespace, Type: ua.IDString, Text: nid.Text[:i]})
	if owner == nil {
		return nil, 0
	}
	name := nid.Text[i+1:]
	for j := range owner.Properties {
		if owner.Properties[j].Name.Name == name {
			return owner, j
		}
	}
	return nil, 0
}

// lookup returns the node with id: a stored one, or for a property a node
// made for the caller, nil if there is none.
func (s *Space) lookup(nid ua.NodeID) *Node {
	if n := s.nodes.get(nid); n != nil {
		return n
	}
	owner, i := s.heldProperty(&nid)
	if owner == nil {
		return nil
	}
	n := new(Node)
	s.propertyNode(owner, i, n, new(ua.DataValue))
	n.refs = []ref{
		{typ: s.hasProperty, target: owner, inverse: true},
		{typ: s.hasTypeDefinition, target: s.propertyType},
	}
	return n
}

// lookupInto is lookup, making the node of a property in *scratch, its
// Value in *dv, without its references (what Read needs, without
// allocating).
func (s *Space) lookupInto(nid *ua.NodeID, scratch *Node, dv *ua.DataValue) *Node {
	if n := s.nodes.get(*nid); n != nil {
		return n
	}
	owner, i := s.heldProperty(nid)
	if owner == nil {
		return nil
	}
	s.propertyNode(owner, i, scratch, dv)
	return scratch
}

// propertyNode fills n with property i of owner, but its references, and
// dv with its Value.
func (s *Space) propertyNode(owner *Node, i int, n *Node, dv *ua.DataValue) {
	p := &owner.Properties[i]
	rank := int32(ValueRankScalar)
	if p.Value.IsArray() {
		rank = ValueRankOneDimension
	}
	*n = Node{
		ID:          ua.NewStringNodeID(owner.ID.Namespace, p.id),
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
	rd.NodeID.NodeID = ua.NewStringNodeID(owner.ID.Namespace, p.id)
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
