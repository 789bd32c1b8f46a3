package addrspace

import (
	"context"
	"fmt"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// MethodHandler runs a call of a method (OPC 10000-4 §5.12.2) on object.
// The input arguments have been checked against the method's
// InputArguments (count, type and shape); they may share the request's
// buffer and must be copied if kept. The handler is called without the
// Space's lock, so it may wait (for a device, say) until ctx ends; it
// returns the call's status and, when Good, the output arguments, one per
// OutputArgument.
type MethodHandler func(ctx context.Context, object ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant)

// Method describes a method for AddMethod.
type Method struct {
	// ID is the Method node's NodeId, a string NodeId: its properties
	// are ID.InputArguments and ID.OutputArguments.
	ID          ua.NodeID
	BrowseName  ua.QualifiedName
	Description ua.LocalizedText
	// Object is the Object the method is a component of.
	Object ua.NodeID
	// InputArguments and OutputArguments describe the arguments; each is
	// a property of the method when not empty.
	InputArguments  []ua.Argument
	OutputArguments []ua.Argument
	Handler         MethodHandler
	// Roles is the Node's Roles: for the User to interpret (the server:
	// which roles may call it; 0 for its default rule).
	Roles uint32
}

// AddMethod adds method m as an executable Method node, a component
// (HasComponent) of m.Object, with its InputArguments and OutputArguments
// properties (arrays of Argument), and registers its handler for Call.
func (s *Space) AddMethod(m *Method) error {
	if m.ID.Type != ua.IDString || m.Handler == nil {
		return fmt.Errorf("%w: method %v needs a string NodeId and a handler", ErrInvalidNode, m.ID)
	}
	s.mu.RLock()
	obj := s.nodes.get(m.Object)
	s.mu.RUnlock()
	if obj == nil || obj.Class != ua.NodeClassObject {
		return fmt.Errorf("%w: method %v: object %v", ErrUnknownNode, m.ID, m.Object)
	}
	ins := append([]ua.Argument(nil), m.InputArguments...)
	outs := append([]ua.Argument(nil), m.OutputArguments...)
	n := &Node{
		ID:          m.ID,
		Class:       ua.NodeClassMethod,
		BrowseName:  m.BrowseName,
		Description: m.Description,
		Executable:  true,
		Roles:       m.Roles,
		method:      &method{in: ins, handler: m.Handler},
	}
	if err := s.AddNode(n,
		Reference{TypeID: ua.NewNumericNodeID(0, id.HasComponent), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: m.Object}},
	); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		args []ua.Argument
	}{{"InputArguments", ins}, {"OutputArguments", outs}} {
		if len(p.args) == 0 {
			continue
		}
		v := make([]ua.ExtensionObject, len(p.args))
		for i := range p.args {
			v[i] = ua.ExtensionObject{Body: &p.args[i]}
		}
		if err := s.AddNode(&Node{
			ID:          ua.NewStringNodeID(m.ID.Namespace, m.ID.Text+"."+p.name),
			Class:       ua.NodeClassVariable,
			BrowseName:  ua.QualifiedName{Name: p.name},
			Value:       &ua.DataValue{Value: ua.MustVariant(v)},
			DataType:    ua.NewNumericNodeID(0, id.Argument),
			ValueRank:   ValueRankOneDimension,
			AccessLevel: uint8(ua.AccessLevelTypeCurrentRead),
		},
			Reference{TypeID: ua.NewNumericNodeID(0, id.HasProperty), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: m.ID}},
			Reference{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.PropertyType)}},
		); err != nil {
			return err
		}
	}
	return nil
}

// SetMethodHandler makes the existing Method node id callable with h: a
// method of namespace 0 such as Server.GetMonitoredItems, or one added
// with AddNode. Call checks the input arguments as for a method added
// with AddMethod, against the Arguments that the method's InputArguments
// property (HasProperty, BrowseName 0:InputArguments) holds when
// SetMethodHandler is called; a method without that property takes no
// arguments. The methods of namespace 0 have theirs from the NodeSet. A
// property whose value is not an array of Arguments is ErrInvalidNode, as
// is a node that is not a Method. A later call replaces
// the handler and reads the property again.
func (s *Space) SetMethodHandler(nid ua.NodeID, h MethodHandler) error {
	if h == nil {
		return fmt.Errorf("%w: method %v needs a handler", ErrInvalidNode, nid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes.get(nid)
	if n == nil {
		return fmt.Errorf("%w: method %v", ErrUnknownNode, nid)
	}
	if n.Class != ua.NodeClassMethod {
		return fmt.Errorf("%w: %v is a %v, not a Method", ErrInvalidNode, nid, n.Class)
	}
	var ins []ua.Argument
	if p := s.property(n, "InputArguments"); p != nil {
		var ok bool
		if ins, ok = arguments(p.StaticValue()); !ok {
			return fmt.Errorf("%w: method %v: InputArguments %v holds no Argument array", ErrInvalidNode, nid, p.ID)
		}
	}
	n.method = &method{in: ins, handler: h}
	return nil
}

// property returns the property of n with BrowseName 0:name, nil if it has
// none. The caller holds s.mu.
func (s *Space) property(n *Node, name string) *Node {
	hasProperty := s.nodes.get(ua.NewNumericNodeID(0, id.HasProperty))
	for _, r := range n.refs {
		if r.inverse || r.target == nil || !isSubtype(r.typ, hasProperty) {
			continue
		}
		if bn := r.target.BrowseName; bn.NamespaceIndex == 0 && bn.Name == name {
			return r.target
		}
	}
	return nil
}

// arguments returns a copy of the Arguments of v, an array of
// ExtensionObjects with Argument bodies.
func arguments(v ua.Variant) ([]ua.Argument, bool) {
	eos, ok := v.Value().([]ua.ExtensionObject)
	if !ok {
		return nil, false
	}
	out := make([]ua.Argument, len(eos))
	for i := range eos {
		a, ok := eos[i].Body.(*ua.Argument)
		if !ok || a == nil {
			return nil, false
		}
		out[i] = *a
	}
	return out, true
}

// method is what Call needs of a callable Method node (AddMethod,
// SetMethodHandler).
type method struct {
	in      []ua.Argument
	handler MethodHandler
}

// Call performs one operation of the Call service (OPC 10000-4 §5.12.2)
// for user (nil: every right the node grants) into res. It checks, under
// the Space's read lock, that the object exists (Bad_NodeIdUnknown) and is
// an Object (Bad_NodeClassInvalid), that the method exists
// (Bad_MethodInvalid) and is a component of that object
// (Bad_MethodInvalid), that it is Executable (Bad_NotExecutable) and
// UserExecutable (Bad_UserAccessDenied) and has a handler (Bad_NotImplemented), and the
// input arguments: too few is Bad_ArgumentsMissing, too many
// Bad_TooManyArguments, and one that does not suit its Argument's DataType
// and ValueRank Bad_TypeMismatch in InputArgumentResults, the call then
// being Bad_InvalidArgument. The handler then runs without the lock,
// with ctx. A method of the object's type (not instantiated on the
// object) is not callable: Bad_MethodInvalid.
func (s *Space) Call(ctx context.Context, req *ua.CallMethodRequest, user User, res *ua.CallMethodResult) {
	res.InputArgumentResults = res.InputArgumentResults[:0]
	res.InputArgumentDiagnosticInfos = nil
	res.OutputArguments = nil
	st, h := s.checkCall(req, user, res)
	if st != status.Good {
		res.StatusCode = st
		return
	}
	st, out := h(ctx, req.ObjectID, req.InputArguments)
	res.StatusCode = st
	if !st.IsBad() {
		// Good, or Uncertain with outputs that say what went wrong
		// (OPC 11030 §5.2, the Status output argument).
		res.OutputArguments = out
	}
}

func (s *Space) checkCall(req *ua.CallMethodRequest, user User, res *ua.CallMethodResult) (ua.StatusCode, MethodHandler) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj := s.nodes.get(req.ObjectID)
	if obj == nil {
		return status.BadNodeIDUnknown, nil
	}
	// An ObjectType's own methods (ConditionType.ConditionRefresh) are
	// called on the type.
	if obj.Class != ua.NodeClassObject && obj.Class != ua.NodeClassObjectType {
		return status.BadNodeClassInvalid, nil
	}
	m := s.nodes.get(req.MethodID)
	if m == nil || m.Class != ua.NodeClassMethod {
		return status.BadMethodInvalid, nil
	}
	hasComponent := s.nodes.get(ua.NewNumericNodeID(0, id.HasComponent))
	component := false
	for _, r := range obj.refs {
		if r.target == m && !r.inverse && isSubtype(r.typ, hasComponent) {
			component = true
			break
		}
	}
	if !component {
		return status.BadMethodInvalid, nil
	}
	if !m.Executable {
		return status.BadNotExecutable, nil
	}
	if user != nil && !user.Executable(m) {
		return status.BadUserAccessDenied, nil
	}
	if m.method == nil {
		return status.BadNotImplemented, nil
	}
	args, in := m.method.in, req.InputArguments
	switch {
	case len(in) < len(args):
		return status.BadArgumentsMissing, nil
	case len(in) > len(args):
		return status.BadTooManyArguments, nil
	}
	bad := false
	for i := range args {
		a := Node{Class: ua.NodeClassVariable, DataType: args[i].DataType, ValueRank: args[i].ValueRank}
		v := in[i]
		st := status.Good
		if s.nodes.get(a.DataType) == nil || s.checkValue(&a, &v) != status.Good {
			st, bad = status.BadTypeMismatch, true
		}
		res.InputArgumentResults = append(res.InputArgumentResults, st)
	}
	if bad {
		return status.BadInvalidArgument, nil
	}
	res.InputArgumentResults = res.InputArgumentResults[:0]
	return status.Good, m.method.handler
}
