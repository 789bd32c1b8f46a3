package addrspace

import (
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// AddProperty adds the static, read-only property nid of owner, named
// name, with the value v of the namespace-0 DataType dataType (a
// HasProperty reference from owner, of type PropertyType).
func (s *Space) AddProperty(owner, nid ua.NodeID, name ua.QualifiedName, dataType uint32, v ua.Variant) error {
	return s.AddNode(&Node{
		ID:          nid,
		Class:       ua.NodeClassVariable,
		BrowseName:  name,
		Value:       &ua.DataValue{Value: v},
		DataType:    ua.NewNumericNodeID(0, dataType),
		ValueRank:   ValueRankScalar,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead),
	},
		Reference{TypeID: ua.NewNumericNodeID(0, id.HasProperty), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: owner}},
		Reference{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.PropertyType)}},
	)
}
