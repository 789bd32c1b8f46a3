package addrspace

import (
	"math"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// BrowseCursor is where a Browse stopped, to continue with BrowseNext. It
// holds no request memory (no aliased strings), so the server may keep it
// as long as it likes, as the continuation point of a session. A cursor
// stays valid while the references of its node do not change; after a
// change BrowseNext reports BadContinuationPointInvalid. The zero value is
// a finished cursor.
type BrowseCursor struct {
	node       *Node
	ver        uint32
	pos        int
	dir        ua.BrowseDirection
	refType    *Node // nil: all references
	subtypes   bool
	classMask  uint32
	resultMask uint32
}

// More reports whether references remain to be returned by BrowseNext.
func (c *BrowseCursor) More() bool { return c.node != nil }

// Browse performs one operation of the Browse service (OPC 10000-4 §5.9.2)
// into res: it sets res.StatusCode and res.References, reusing that
// slice's capacity (the descriptions share the space's strings, which are
// never changed in place). res.ContinuationPoint is left alone: when more
// than maxRefs references match (maxRefs 0: no limit), the first maxRefs
// are returned and *next is set to continue (next.More() is true); the
// server then makes the continuation point. Otherwise *next is a finished
// cursor.
//
// The references are those of the node in the direction d.BrowseDirection
// (BadBrowseDirectionInvalid outside Forward, Inverse, Both) of type
// d.ReferenceTypeID, and its subtypes if d.IncludeSubtypes (a null type
// matches all; a node that is not a ReferenceType is
// BadReferenceTypeIdInvalid), whose targets' NodeClass is in
// d.NodeClassMask (0: all; bits above View are ignored, and a remote
// target of unknown class always passes). Only the fields of
// ReferenceDescription that d.ResultMask asks for are filled, the others
// zeroed; TypeDefinition is set for Object and Variable targets. An
// unknown node is BadNodeIdUnknown. Browse allocates only to grow
// res.References, to make the node of a held Variable or a Property it
// starts from, and for the NodeIds of Properties.
func (s *Space) Browse(d *ua.BrowseDescription, maxRefs uint32, res *ua.BrowseResult, next *BrowseCursor) {
	*next = BrowseCursor{}
	res.References = res.References[:0]
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.lookup(d.NodeID)
	if n == nil {
		res.StatusCode = status.BadNodeIDUnknown
		return
	}
	if d.BrowseDirection < ua.BrowseDirectionForward || d.BrowseDirection > ua.BrowseDirectionBoth {
		res.StatusCode = status.BadBrowseDirectionInvalid
		return
	}
	var typ *Node
	if !d.ReferenceTypeID.IsNull() {
		if typ = s.nodes.get(d.ReferenceTypeID); typ == nil || typ.Class != ua.NodeClassReferenceType {
			res.StatusCode = status.BadReferenceTypeIDInvalid
			return
		}
	}
	c := BrowseCursor{
		node:       n,
		ver:        root(n).refsVer,
		dir:        d.BrowseDirection,
		refType:    typ,
		subtypes:   d.IncludeSubtypes,
		classMask:  d.NodeClassMask & 0xFF,
		resultMask: d.ResultMask,
	}
	res.StatusCode = status.Good
	s.browse(&c, maxRefs, res)
	*next = c
}

// BrowseNext continues a Browse from c (OPC 10000-4 §5.9.3) into res,
// like Browse, and advances c; c.More tells whether references remain. A
// finished cursor, or one whose node's references changed, is
// BadContinuationPointInvalid.
func (s *Space) BrowseNext(c *BrowseCursor, maxRefs uint32, res *ua.BrowseResult) {
	res.References = res.References[:0]
	s.mu.RLock()
	defer s.mu.RUnlock()
	if c.node == nil || !s.holds(c.node) || root(c.node).refsVer != c.ver {
		*c = BrowseCursor{}
		res.StatusCode = status.BadContinuationPointInvalid
		return
	}
	res.StatusCode = status.Good
	s.browse(c, maxRefs, res)
}

// browse appends up to maxRefs matching references from c.pos on, and
// leaves c at the next match, or finished.
func (s *Space) browse(c *BrowseCursor, maxRefs uint32, res *ua.BrowseResult) {
	if maxRefs == 0 {
		maxRefs = math.MaxUint32
	}
	// The node's references, then the HasProperty ones of its Properties,
	// then the HasComponent ones of the Variables it holds.
	refs, props, held := c.node.refs, c.node.Properties, c.node.held
	end := len(refs) + len(props) + len(held)
	for ; c.pos < end; c.pos++ {
		switch {
		case c.pos < len(refs):
			r := &refs[c.pos]
			var class ua.NodeClass
			if r.target != nil {
				class = r.target.Class
			}
			if !c.matches(r.typ, r.inverse, class) {
				continue
			}
		case c.pos < len(refs)+len(props):
			if !c.matches(s.hasProperty, false, ua.NodeClassVariable) {
				continue
			}
		default:
			if !c.matches(s.hasComponent, false, ua.NodeClassVariable) {
				continue
			}
		}
		if uint32(len(res.References)) == maxRefs {
			return // c.pos is the next match
		}
		res.References = append(res.References, ua.ReferenceDescription{})
		rd := &res.References[len(res.References)-1]
		switch {
		case c.pos < len(refs):
			s.describe(&refs[c.pos], c.resultMask, rd)
		case c.pos < len(refs)+len(props):
			s.describeProperty(c.node, &props[c.pos-len(refs)], c.resultMask, rd)
		default:
			s.describeHeld(c.node, held[c.pos-len(refs)-len(props)], c.resultMask, rd)
		}
	}
	*c = BrowseCursor{}
}

// root returns the stored node of n: n, or for a node made for a held
// Variable or a Property, the stored node holding it. Its refsVer counts
// the changes of n's references.
func root(n *Node) *Node {
	for n.owner != nil {
		n = n.owner
	}
	return n
}

// holds reports whether n is still the Space's (for a node made for a
// held Variable or a Property: its holder is).
func (s *Space) holds(n *Node) bool {
	n = root(n)
	return s.nodes.get(n.ID) == n
}

// matches reports whether a reference of type typ, inverse or not, to a
// target of node class class (0: unknown, a remote target) is one c
// returns.
func (c *BrowseCursor) matches(typ *Node, inverse bool, class ua.NodeClass) bool {
	switch c.dir {
	case ua.BrowseDirectionForward:
		if inverse {
			return false
		}
	case ua.BrowseDirectionInverse:
		if !inverse {
			return false
		}
	}
	if c.refType != nil && typ != c.refType && !(c.subtypes && isSubtype(typ, c.refType)) {
		return false
	}
	if c.classMask != 0 && class != 0 && uint32(class)&c.classMask == 0 {
		return false
	}
	return true
}

// describe fills rd with the fields of mask.
func (s *Space) describe(r *ref, mask uint32, rd *ua.ReferenceDescription) {
	m := ua.BrowseResultMask(mask)
	if m&ua.BrowseResultMaskReferenceTypeID != 0 {
		rd.ReferenceTypeID = r.typ.ID
	}
	if m&ua.BrowseResultMaskIsForward != 0 {
		rd.IsForward = !r.inverse
	}
	t := r.target
	if t == nil {
		rd.NodeID = *r.remote
		return
	}
	rd.NodeID.NodeID = t.ID
	if m&ua.BrowseResultMaskNodeClass != 0 {
		rd.NodeClass = t.Class
	}
	if m&ua.BrowseResultMaskBrowseName != 0 {
		rd.BrowseName = t.BrowseName
	}
	if m&ua.BrowseResultMaskDisplayName != 0 {
		rd.DisplayName = t.DisplayName
	}
	if m&ua.BrowseResultMaskTypeDefinition != 0 && (t.Class == ua.NodeClassObject || t.Class == ua.NodeClassVariable) {
		if td := s.typeDefinition(t); td != nil {
			rd.TypeDefinition.NodeID = td.ID
		}
	}
}

// typeDefinition returns the target of n's HasTypeDefinition reference.
func (s *Space) typeDefinition(n *Node) *Node {
	for i := range n.refs {
		if r := &n.refs[i]; r.typ == s.hasTypeDefinition && !r.inverse {
			return r.target
		}
	}
	return nil
}

// TranslateBrowsePath performs one operation of the
// TranslateBrowsePathsToNodeIds service (OPC 10000-4 §5.9.4) into res,
// reusing res.Targets. From bp.StartingNode (BadNodeIdUnknown if absent)
// each element of the RelativePath (none: BadNothingToDo) follows the
// references of its type (a null type: all; IncludeSubtypes; IsInverse)
// to targets with its TargetName; an empty TargetName is allowed only in
// the last element, where it matches every target (elsewhere:
// BadBrowseNameInvalid). The targets reached by the whole path have
// RemainingPathIndex MaxUint32; a remote target reached by element i is
// returned with RemainingPathIndex i, the first element it did not check.
// No target is BadNoMatch.
func (s *Space) TranslateBrowsePath(bp *ua.BrowsePath, res *ua.BrowsePathResult) {
	res.Targets = res.Targets[:0]
	elems := bp.RelativePath.Elements
	if len(elems) == 0 {
		res.StatusCode = status.BadNothingToDo
		return
	}
	for i := range elems {
		if elems[i].TargetName.Name == "" && i < len(elems)-1 {
			res.StatusCode = status.BadBrowseNameInvalid
			return
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	start := s.lookup(bp.StartingNode)
	if start == nil {
		res.StatusCode = status.BadNodeIDUnknown
		return
	}
	cur := []*Node{start}
	var next []*Node
	for i := range elems {
		e := &elems[i]
		var typ *Node
		if !e.ReferenceTypeID.IsNull() {
			if typ = s.nodes.get(e.ReferenceTypeID); typ == nil || typ.Class != ua.NodeClassReferenceType {
				break // no reference matches: BadNoMatch
			}
		}
		next = next[:0]
		for _, n := range cur {
			for j := range n.refs {
				r := &n.refs[j]
				if r.inverse != e.IsInverse || typ != nil && r.typ != typ && !(e.IncludeSubtypes && isSubtype(r.typ, typ)) {
					continue
				}
				if r.target == nil {
					addTarget(res, *r.remote, uint32(i))
					continue
				}
				if e.TargetName.Name != "" && r.target.BrowseName != e.TargetName {
					continue
				}
				if i == len(elems)-1 {
					addTarget(res, ua.ExpandedNodeID{NodeID: r.target.ID}, math.MaxUint32)
				} else if !containsNode(next, r.target) {
					next = append(next, r.target)
				}
			}
			if e.IsInverse {
				continue
			}
			if s.follows(typ, e.IncludeSubtypes, s.hasProperty) {
				for j := range n.Properties {
					p := &n.Properties[j]
					if e.TargetName.Name != "" && p.Name != e.TargetName {
						continue
					}
					if i == len(elems)-1 {
						addTarget(res, ua.ExpandedNodeID{NodeID: propertyID(n.ID.Namespace, n.ID.Text, p)}, math.MaxUint32)
					} else {
						next = append(next, s.lookup(propertyID(n.ID.Namespace, n.ID.Text, p)))
					}
				}
			}
			if len(n.held) > 0 && s.follows(typ, e.IncludeSubtypes, s.hasComponent) {
				for _, v := range n.held {
					if e.TargetName.Name != "" && (e.TargetName.Name != v.name(n) || e.TargetName.NamespaceIndex != n.ID.Namespace) {
						continue
					}
					if i == len(elems)-1 {
						addTarget(res, ua.ExpandedNodeID{NodeID: ua.NewStringNodeID(n.ID.Namespace, v.id)}, math.MaxUint32)
					} else {
						next = append(next, s.heldNode(n, v))
					}
				}
			}
		}
		cur, next = next, cur
	}
	if len(res.Targets) == 0 {
		res.StatusCode = status.BadNoMatch
		return
	}
	res.StatusCode = status.Good
}

// follows reports whether a path element of reference type typ (nil: any),
// with its subtypes if subtypes, follows references of type t.
func (s *Space) follows(typ *Node, subtypes bool, t *Node) bool {
	return typ == nil || typ == t || subtypes && isSubtype(t, typ)
}

func containsNode(list []*Node, n *Node) bool {
	for _, m := range list {
		if m == n {
			return true
		}
	}
	return false
}

func addTarget(res *ua.BrowsePathResult, id ua.ExpandedNodeID, remaining uint32) {
	for _, t := range res.Targets {
		if t.TargetID == id && t.RemainingPathIndex == remaining {
			return
		}
	}
	res.Targets = append(res.Targets, ua.BrowsePathTarget{TargetID: id, RemainingPathIndex: remaining})
}
