// Package addrspace is an in-memory OPC UA address space: nodes with their
// attributes and references, namespace 0 as generated from the normative
// NodeSet, and the attribute and view services' semantics on it (Read,
// Write, Browse, BrowseNext, TranslateBrowsePathsToNodeIds). It knows
// nothing of sessions or the wire: the server calls it once per operation
// with decoded request values and caller-owned result values, so the read
// path allocates nothing.
//
// How it works, and why, is in docs/address-space.md.
package addrspace

//go:generate go run ../internal/nsgen -schema ../../../shared/opcua-schema -out zz_ns0.go

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/edged/edged/opcua/ua"
)

// Reference is a reference as seen from one of its ends: of type TypeID,
// from that node to Target (IsInverse false), or from Target to it
// (IsInverse true).
type Reference struct {
	TypeID    ua.NodeID
	IsInverse bool
	Target    ua.ExpandedNodeID
}

// Node is a node of any node class; the fields that do not belong to its
// class are zero. A Node is filled in by the caller and handed to AddNode;
// from then on the Space owns it: its fields may be read while nothing
// writes (Space.Node), and change only through the Space's methods.
type Node struct {
	ID          ua.NodeID
	BrowseName  ua.QualifiedName
	DisplayName ua.LocalizedText
	Description ua.LocalizedText
	Class       ua.NodeClass
	// WriteMask says which attributes Write may change (ua.AttributeWriteMask
	// bits); the UserWriteMask attribute is WriteMask and-ed with the
	// User's.
	WriteMask uint32

	// Variable and VariableType. Value is the value when Source is 0 (nil
	// for none, and when Source serves it: AddNode keeps a copy of its
	// own); the UserAccessLevel attribute is AccessLevel and-ed with the
	// User's.
	// (The fields of all classes are in the order that packs them: a
	// gateway holds a node per tag.)
	Value                   *ua.DataValue
	DataType                ua.NodeID
	ArrayDimensions         []uint32
	MinimumSamplingInterval float64
	ValueRank               int32
	// Source, when not 0, serves the value (see AddSource): Handle
	// identifies the variable in the source's snapshots.
	Source      SourceID
	Handle      uint32
	AccessLevel uint8
	Historizing bool

	// Object and View.
	EventNotifier uint8
	// ObjectType, VariableType, ReferenceType, DataType.
	IsAbstract bool
	// ReferenceType.
	Symmetric bool
	// View.
	ContainsNoLoops bool
	// Method. The UserExecutable attribute is Executable and-ed with the
	// User's.
	Executable bool
	// Roles is not an attribute: it is for the User (see User.Executable)
	// to interpret; the server reads it as the roles that may call a
	// method, 0 for its default rule.
	Roles uint32

	// Sink, when set, receives the Writes of the Value (with Handle), of a
	// Variable.
	Sink ValueSink
	// InverseName, of a ReferenceType; nil for none.
	InverseName *ua.LocalizedText
	// Properties are the node's static properties that are not nodes of
	// their own (see Property); the node needs a string NodeId.
	Properties []Property

	method *method // set by AddMethod
	// owner, of a node made for a held Variable or a Property: the stored
	// node holding it (for a held Variable's Property: the node made for
	// that Variable).
	owner   *Node
	heldVar *held   // of a node made for a held Variable: that Variable
	held    []*held // AddVariable's, in the order added
	refs    []ref
	refsVer uint32 // counts changes of refs, to invalidate BrowseCursors
	super   *Node  // the supertype of a type node (inverse HasSubtype)
}

// ref is a reference held by a node. Local targets are resolved to their
// node; a target on another server, or in a namespace of this server that
// the space does not hold, is kept as remote.
type ref struct {
	typ     *Node
	target  *Node
	remote  *ua.ExpandedNodeID
	inverse bool
}

// ValueSource serves variable values in consistent snapshots.
type ValueSource interface {
	// Snapshot returns the current image. It must not block on the writer
	// (an atomic pointer load, say), must not call into the Space, and
	// should not allocate.
	Snapshot() Snapshot
}

// Snapshot is one immutable image of a ValueSource.
type Snapshot interface {
	// Value writes the value, status and source timestamp of the variable
	// with handle h into dv, preferably with the Variant Set methods,
	// which reuse dv's storage. dv.Status and the timestamps are reset
	// before the call.
	Value(h uint32, dv *ua.DataValue)
}

// Releaser is a Snapshot whose source reuses its storage once its readers
// are done with it: whoever took the snapshot from ValueSource.Snapshot
// calls Release once, after its last Value (ReadContext does this for
// the snapshots it takes). A snapshot that is not released still reads
// correctly; its source just cannot reuse it.
type Releaser interface {
	Release()
}

// ReleaseSnapshot releases snap if it is a Releaser; nil does nothing.
func ReleaseSnapshot(snap Snapshot) {
	if r, ok := snap.(Releaser); ok {
		r.Release()
	}
}

// SourceFunc is a ValueSource that is its own snapshot: f is called for
// every read, under the Space's read lock, so it must be quick and must
// not call into the Space. It suits live values such as the server's
// current time:
//
//	s.SetSource(ua.NewNumericNodeID(0, id.Server_ServerStatus_CurrentTime),
//		s.AddSource(addrspace.SourceFunc(func(_ uint32, dv *ua.DataValue) {
//			dv.Value.SetDateTime(time.Now())
//		})), 0)
type SourceFunc func(h uint32, dv *ua.DataValue)

// Snapshot returns f.
func (f SourceFunc) Snapshot() Snapshot { return f }

// Value calls f.
func (f SourceFunc) Value(h uint32, dv *ua.DataValue) { f(h, dv) }

// SourceID identifies a ValueSource registered with AddSource; 0 is none.
type SourceID uint32

// ValueSink receives Writes of the Value attribute of external variables
// (the scan engine queues them for the device). It is called under the
// Space's write lock after the access and type checks, and must not block
// nor call into the Space; wv is the caller's and must be copied if kept.
// It returns the operation's result, or, for a write that finishes later
// (on a device), Good and a Pending result that will deliver it; Write
// waits for that outside the lock (see WriteStart).
type ValueSink interface {
	WriteValue(h uint32, wv *ua.WriteValue) (ua.StatusCode, Pending)
}

// Pending is the result of a write that a ValueSink started: it delivers
// the operation's result exactly once (Good, or the device's error such as
// BadTimeout or BadCommunicationError). A sink sends on a channel with
// room for the result, so that it never blocks when nobody waits any more.
type Pending <-chan ua.StatusCode

// User is the session's user as the attribute services see it: its rights
// are and-ed with what the node allows. A nil User has every right the
// node grants. The methods are called under the Space's lock and must not
// call into the Space.
type User interface {
	// AccessLevel returns the AccessLevel bits the user has on variable n.
	AccessLevel(n *Node) uint8
	// WriteMask returns the WriteMask bits the user has on n.
	WriteMask(n *Node) uint32
	// Executable reports whether the user may call method n.
	Executable(n *Node) bool
}

// ReadOnlyUser may read and browse everything readable and write nothing.
type ReadOnlyUser struct{}

// AccessLevel returns CurrentRead and HistoryRead.
func (ReadOnlyUser) AccessLevel(*Node) uint8 {
	return uint8(ua.AccessLevelTypeCurrentRead | ua.AccessLevelTypeHistoryRead)
}

// WriteMask returns 0.
func (ReadOnlyUser) WriteMask(*Node) uint32 { return 0 }

// Executable returns false.
func (ReadOnlyUser) Executable(*Node) bool { return false }

// Clock gives the server timestamp; tests replace it.
type Clock func() time.Time

// Space is an address space. Its zero value is not usable: call New.
type Space struct {
	mu         sync.RWMutex
	nodes      nodeTable
	namespaces []string
	sources    []ValueSource // by SourceID-1
	clock      Clock
	// wnode and wdv are where Write makes the node of a held Variable or
	// a Property (under the write lock).
	wnode Node
	wdv   ua.DataValue

	// Well-known nodes, resolved once.
	hasSubtype, hasTypeDefinition, hasEncoding *Node
	hasProperty, propertyType                  *Node
	hasComponent, baseDataVariableType         *Node
	namespaceArray                             *Node
	structure, baseDataType                    *Node
}

// Namespace-0 ids used by the package.
const (
	idBaseDataType        = 24
	idStructure           = 22
	idNumber              = 26
	idInteger             = 27
	idUInteger            = 28
	idEnumeration         = 29
	idHasSubtype          = 45
	idHasProperty         = 46
	idHasComponent        = 47
	idHasOrderedComponent = 49
	idHasTypeDefinition   = 40
	idPropertyType        = 68
	idHasEncoding         = 38
	idNamespaceArray      = 2255
)

// NamespaceURI0 is the URI of namespace 0.
const NamespaceURI0 = "http://opcfoundation.org/UA/"

// New returns a Space holding namespace 0. Its clock is time.Now.
func New() *Space {
	s := &Space{
		nodes:      newNodeTable(ns0NodeCount + 64),
		namespaces: []string{NamespaceURI0},
		clock:      time.Now,
	}
	loadNS0(s)
	now := s.clock()
	for _, n := range s.nodes.all() {
		stamp(n, now)
	}
	s.hasSubtype = s.nodes.get(ua.NewNumericNodeID(0, idHasSubtype))
	s.hasTypeDefinition = s.nodes.get(ua.NewNumericNodeID(0, idHasTypeDefinition))
	s.hasEncoding = s.nodes.get(ua.NewNumericNodeID(0, idHasEncoding))
	s.hasProperty = s.nodes.get(ua.NewNumericNodeID(0, idHasProperty))
	s.propertyType = s.nodes.get(ua.NewNumericNodeID(0, idPropertyType))
	s.hasComponent = s.nodes.get(ua.NewNumericNodeID(0, idHasComponent))
	s.baseDataVariableType = s.nodes.get(ua.NewNumericNodeID(0, idBaseDataVariableType))
	s.structure = s.nodes.get(ua.NewNumericNodeID(0, idStructure))
	s.baseDataType = s.nodes.get(ua.NewNumericNodeID(0, idBaseDataType))
	s.namespaceArray = s.nodes.get(ua.NewNumericNodeID(0, idNamespaceArray))
	s.setNamespaceArray()
	return s
}

// SetClock replaces the clock that gives server timestamps.
func (s *Space) SetClock(c Clock) {
	s.mu.Lock()
	s.clock = c
	s.mu.Unlock()
}

// AddNamespace returns the index of namespace uri, adding it (and updating
// Server/NamespaceArray) if it is new.
func (s *Space) AddNamespace(uri string) uint16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.namespaces, uri); i >= 0 {
		return uint16(i)
	}
	if len(s.namespaces) > 0xFFFF {
		panic("addrspace: more than 65536 namespaces")
	}
	s.namespaces = append(s.namespaces, uri)
	s.setNamespaceArray()
	return uint16(len(s.namespaces) - 1)
}

// NamespaceIndex returns the index of namespace uri.
func (s *Space) NamespaceIndex(uri string) (uint16, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i := slices.Index(s.namespaces, uri)
	return uint16(i), i >= 0
}

// Namespaces returns a copy of the namespace table.
func (s *Space) Namespaces() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.namespaces)
}

// setNamespaceArray stores a fresh copy of the namespace table as the
// NamespaceArray value (the old one may be shared with a reader).
func (s *Space) setNamespaceArray() {
	if s.namespaceArray != nil {
		s.namespaceArray.setValue(ua.DataValue{Value: ua.MustVariant(slices.Clone(s.namespaces)), SourceTimestamp: s.clock()})
	}
}

// Node returns the node with id, nil if there is none. It does not
// allocate, but for a Property, whose node it makes. The node is the
// Space's: read its fields only while no Write or Set method runs (during
// setup, in tests); Read reads them safely.
func (s *Space) Node(id ua.NodeID) *Node {
	s.mu.RLock()
	n := s.lookup(id)
	s.mu.RUnlock()
	return n
}

// Len returns the number of nodes, not counting Properties.
func (s *Space) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nodes.len()
}

// References returns the references of node id, as listed at that node,
// nil if there is no such node. It allocates; Browse does not.
func (s *Space) References(id ua.NodeID) []Reference {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.lookup(id)
	if n == nil {
		return nil
	}
	out := make([]Reference, len(n.refs), len(n.refs)+len(n.Properties)+len(n.held))
	for i, r := range n.refs {
		out[i] = Reference{TypeID: r.typ.ID, IsInverse: r.inverse, Target: r.targetID()}
	}
	for i := range n.Properties {
		out = append(out, Reference{TypeID: s.hasProperty.ID, Target: ua.ExpandedNodeID{NodeID: propertyID(n.ID.Namespace, n.ID.Text, &n.Properties[i])}})
	}
	for _, v := range n.held {
		out = append(out, Reference{TypeID: s.hasComponent.ID, Target: ua.ExpandedNodeID{NodeID: ua.NewStringNodeID(n.ID.Namespace, v.id)}})
	}
	return out
}

func (r *ref) targetID() ua.ExpandedNodeID {
	if r.target != nil {
		return ua.ExpandedNodeID{NodeID: r.target.ID}
	}
	return *r.remote
}

// Errors of AddNode and AddReference.
var (
	ErrNodeExists   = errors.New("addrspace: node id already in use")
	ErrUnknownNode  = errors.New("addrspace: no such node")
	ErrInvalidNode  = errors.New("addrspace: invalid node")
	ErrNotReference = errors.New("addrspace: not a ReferenceType")
)

// AddNode adds n with the references refs from it; each reference is
// added at both ends when its target is a node of the space. A target in
// this server must exist already (add parents and types first, and give a
// child the inverse reference to its parent) or be n itself; a target
// with a server index or namespace URI is kept as remote. n must have a
// non-null ID in a known namespace, a node class and a BrowseName; an
// empty DisplayName becomes the BrowseName's name. A Variable without a
// DataType gets BaseDataType. n's Properties need a string NodeId, names
// unique among them and DataTypes of namespace 0, and their NodeIds must
// be free. The Space owns n from now on.
func (s *Space) AddNode(n *Node, refs ...Reference) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n.ID.IsNull() || int(n.ID.Namespace) >= len(s.namespaces) || n.BrowseName.Name == "" || n.refs != nil || n.owner != nil || n.heldVar != nil {
		return fmt.Errorf("%w: %v", ErrInvalidNode, n.ID)
	}
	switch n.Class {
	case ua.NodeClassObject, ua.NodeClassVariable, ua.NodeClassMethod, ua.NodeClassObjectType,
		ua.NodeClassVariableType, ua.NodeClassReferenceType, ua.NodeClassDataType, ua.NodeClassView:
	default:
		return fmt.Errorf("%w: %v: node class %v", ErrInvalidNode, n.ID, n.Class)
	}
	if s.nodes.taken(&n.ID) {
		return fmt.Errorf("%w: %v", ErrNodeExists, n.ID)
	}
	if owner, _, _ := s.heldProperty(&n.ID); owner != nil {
		return fmt.Errorf("%w: %v (a property of %v)", ErrNodeExists, n.ID, owner.ID)
	}
	if n.DisplayName == (ua.LocalizedText{}) {
		n.DisplayName.Text = n.BrowseName.Name
	}
	if (n.Class == ua.NodeClassVariable || n.Class == ua.NodeClassVariableType) && n.DataType.IsNull() {
		n.DataType = s.baseDataType.ID
	}
	if n.Source != 0 && int(n.Source) > len(s.sources) {
		return fmt.Errorf("%w: %v: unknown source %d", ErrInvalidNode, n.ID, n.Source)
	}
	// Check every reference before changing anything.
	type resolved struct {
		typ, target *Node
		remote      *ua.ExpandedNodeID
		inverse     bool
	}
	rs := make([]resolved, 0, len(refs))
	for _, r := range refs {
		typ, target, remote, err := s.resolveRef(r.TypeID, r.Target, n)
		if err != nil {
			return fmt.Errorf("%v: %w", n.ID, err)
		}
		rs = append(rs, resolved{typ, target, remote, r.IsInverse})
	}
	now := s.clock()
	if err := s.addProperties(n, now); err != nil {
		return err
	}
	if n.Value != nil && n.Source == 0 {
		v := *n.Value // the Space's own: Write and SetValue change it in place
		n.Value = &v
	} else if n.Source != 0 {
		n.Value = nil // the source serves it
	}
	stamp(n, now)
	s.nodes.put(n)
	for _, r := range rs {
		s.link(n, r.typ, r.target, r.remote, r.inverse)
	}
	return nil
}

// stamp gives the static Value of a Variable a SourceTimestamp, t, if it
// has none: the time the value entered the space. Values from sources
// bring their own.
func stamp(n *Node, t time.Time) {
	if n.Class != ua.NodeClassVariable || n.Source != 0 {
		return
	}
	if n.Value == nil {
		n.setValue(ua.DataValue{SourceTimestamp: t})
	} else if n.Value.SourceTimestamp.IsZero() {
		n.Value.SourceTimestamp = t
	}
}

// StaticValue returns the Value of n's static DataValue, null if none.
func (n *Node) StaticValue() ua.Variant {
	if n.Value == nil {
		return ua.Variant{}
	}
	return n.Value.Value
}

// AddReference adds the reference of type typ from source to target at
// both ends (at source only when target is remote).
func (s *Space) AddReference(source, typ ua.NodeID, target ua.ExpandedNodeID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.nodes.get(source)
	if src == nil {
		return fmt.Errorf("%w: %v", ErrUnknownNode, source)
	}
	t, tgt, remote, err := s.resolveRef(typ, target, nil)
	if err != nil {
		return err
	}
	s.link(src, t, tgt, remote, false)
	return nil
}

func (s *Space) resolveRef(typ ua.NodeID, target ua.ExpandedNodeID, self *Node) (t, tgt *Node, remote *ua.ExpandedNodeID, err error) {
	t = s.nodes.get(typ)
	if t == nil || t.Class != ua.NodeClassReferenceType {
		return nil, nil, nil, fmt.Errorf("%w: %v", ErrNotReference, typ)
	}
	if target.ServerIndex != 0 || target.NamespaceURI != "" {
		c := target
		return t, nil, &c, nil
	}
	if self != nil && target.NodeID == self.ID {
		return t, self, nil, nil
	}
	if tgt = s.nodes.get(target.NodeID); tgt == nil {
		return nil, nil, nil, fmt.Errorf("%w: reference target %v", ErrUnknownNode, target.NodeID)
	}
	return t, tgt, nil, nil
}

// link adds a reference at n and, for a local target, its inverse at the
// target, unless already there.
func (s *Space) link(n, typ, target *Node, remote *ua.ExpandedNodeID, inverse bool) {
	if !n.hasRef(typ, target, remote, inverse) {
		n.refs = append(n.refs, ref{typ: typ, target: target, remote: remote, inverse: inverse})
		n.refsVer++
	}
	if target == nil {
		return
	}
	if !target.hasRef(typ, n, nil, !inverse) {
		target.refs = append(target.refs, ref{typ: typ, target: n, inverse: !inverse})
		target.refsVer++
	}
	if typ == s.hasSubtype {
		if inverse {
			n.super = target
		} else {
			target.super = n
		}
	}
}

func (n *Node) hasRef(typ, target *Node, remote *ua.ExpandedNodeID, inverse bool) bool {
	for _, r := range n.refs {
		if r.typ == typ && r.target == target && r.inverse == inverse &&
			(remote == nil) == (r.remote == nil) && (remote == nil || *remote == *r.remote) {
			return true
		}
	}
	return false
}

// IsSubtype reports whether type t is super or one of its subtypes
// (through HasSubtype), for ReferenceTypes, DataTypes, ObjectTypes and
// VariableTypes. It does not allocate.
func (s *Space) IsSubtype(t, super ua.NodeID) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return isSubtype(s.nodes.get(t), s.nodes.get(super))
}

// isSubtype walks from t up the supertype chain to super.
func isSubtype(t, super *Node) bool {
	if t == nil || super == nil {
		return false
	}
	for ; t != nil; t = t.super {
		if t == super {
			return true
		}
	}
	return false
}

// AddSource registers a ValueSource and returns its id, for Node.Source
// and SetSource. A request takes one snapshot per id, so all variables of
// one image must share one id: registering a comparable source (a
// pointer, say) that is already registered returns its existing id. A
// SourceFunc is not comparable and gets a new id each time.
func (s *Space) AddSource(src ValueSource) SourceID {
	s.mu.Lock()
	defer s.mu.Unlock()
	if reflect.ValueOf(src).Comparable() {
		for i, old := range s.sources {
			if reflect.ValueOf(old).Comparable() && reflect.TypeOf(old) == reflect.TypeOf(src) && old == src {
				return SourceID(i + 1)
			}
		}
	}
	s.sources = append(s.sources, src)
	return SourceID(len(s.sources))
}

// SetSource makes variable id external, served by source src with handle
// h; src 0 makes it static again (with its last stored value).
func (s *Space) SetSource(id ua.NodeID, src SourceID, h uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.variable(id)
	if err != nil {
		return err
	}
	if int(src) > len(s.sources) {
		return fmt.Errorf("%w: unknown source %d", ErrInvalidNode, src)
	}
	n.Source, n.Handle = src, h
	return nil
}

// SetSink sets the ValueSink of variable id (nil for none).
func (s *Space) SetSink(id ua.NodeID, sink ValueSink) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.variable(id)
	if err != nil {
		return err
	}
	n.Sink = sink
	return nil
}

// SetValue stores v as the static value of variable (or VariableType) id,
// with status Good and the clock's time as source timestamp, whatever its
// access level: it is how the server keeps its own variables
// (ServerStatus/State, ServerCapabilities, diagnostics counters) current.
// v is stored as it is: the caller must not change it afterwards. It does
// not check v against the DataType.
func (s *Space) SetValue(id ua.NodeID, v ua.Variant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.variable(id)
	if err != nil {
		return err
	}
	n.setValue(ua.DataValue{Value: v, SourceTimestamp: s.clock()})
	return nil
}

// SetRoles sets node id's Roles (see Node.Roles): who may call a method
// of namespace 0, say.
func (s *Space) SetRoles(id ua.NodeID, roles uint32) error {
	return s.change(id, func(n *Node) { n.Roles = roles })
}

// SetEventNotifier sets node id's EventNotifier attribute.
func (s *Space) SetEventNotifier(id ua.NodeID, v uint8) error {
	return s.change(id, func(n *Node) { n.EventNotifier = v })
}

// change applies f to node id under the Space's write lock.
func (s *Space) change(id ua.NodeID, f func(*Node)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes.get(id)
	if n == nil {
		return fmt.Errorf("%w: %v", ErrUnknownNode, id)
	}
	f(n)
	return nil
}

// setValue stores dv as the static Value of n, in the DataValue n has if
// it has one (readers copy it under the Space's read lock).
func (n *Node) setValue(dv ua.DataValue) {
	if n.Value == nil {
		n.Value = new(ua.DataValue)
	}
	*n.Value = dv
}

func (s *Space) variable(id ua.NodeID) (*Node, error) {
	n := s.nodes.get(id)
	if n == nil {
		return nil, fmt.Errorf("%w: %v", ErrUnknownNode, id)
	}
	if n.Class != ua.NodeClassVariable && n.Class != ua.NodeClassVariableType {
		return nil, fmt.Errorf("%w: %v is a %v, not a Variable", ErrInvalidNode, id, n.Class)
	}
	return n, nil
}

// RemoveNode removes node id and what it owns: the Variables it holds
// (AddVariable), the nodes it references forward with HasComponent, HasProperty or HasOrderedComponent (a device
// folder's variables, a variable's properties, a method's arguments),
// recursively, unless another node still owns them the same way. Every
// reference to a removed node goes with it, at both ends. A Read, Write,
// Browse or Call of a removed node then answers Bad_NodeIdUnknown.
func (s *Space) RemoveNode(id ua.NodeID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id.Type == ua.IDString {
		if e := s.nodes.getString(id.Namespace, id.Text); e.v != nil {
			s.removeHeld(e.n, e.v)
			return nil
		}
	}
	n := s.nodes.get(id)
	if n == nil {
		return fmt.Errorf("%w: %v", ErrUnknownNode, id)
	}
	owning := func(r *ref) bool {
		if r.typ == nil {
			return false
		}
		switch r.typ.ID {
		case ua.NewNumericNodeID(0, idHasComponent), ua.NewNumericNodeID(0, idHasProperty), ua.NewNumericNodeID(0, idHasOrderedComponent):
			return true
		}
		return false
	}
	gone := map[*Node]bool{n: true}
	stack := []*Node{n}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for i := range m.refs {
			r := &m.refs[i]
			if r.inverse || r.target == nil || gone[r.target] || !owning(r) {
				continue
			}
			// Owned by another node that stays: keep it.
			shared := false
			for j := range r.target.refs {
				b := &r.target.refs[j]
				if b.inverse && owning(b) && b.target != nil && !gone[b.target] && b.target != m {
					shared = true
				}
			}
			if !shared {
				gone[r.target] = true
				stack = append(stack, r.target)
			}
		}
	}
	for m := range gone {
		for i := range m.refs {
			t := m.refs[i].target
			if t == nil || gone[t] {
				continue
			}
			t.refs = slices.DeleteFunc(t.refs, func(b ref) bool { return b.target == m })
			t.refsVer++
			if t.super == m {
				t.super = nil
			}
		}
		for _, v := range m.held {
			s.nodes.del(ua.NewStringNodeID(m.ID.Namespace, v.id))
		}
		m.held = nil
		s.nodes.del(m.ID)
	}
	return nil
}
