package main

import (
	"bytes"
	"fmt"
	"go/format"
	"slices"
	"strings"
)

// The event types of namespace 0 for package events (-events): each
// subtype of BaseEventType with its supertype and the event fields it
// declares, the browse paths of the Variables among its instance
// declarations (children with a ModellingRule, reached by forward
// hierarchical references other than HasSubtype, through Objects and
// Variables), with their DataType and ValueRank. addrspace keeps only
// BaseEventType's declarations; a filter names the fields of any type.

const idHasComponent = 47

type eventField struct {
	path      string
	dataType  uint32
	valueRank int
}

// eventTypes returns the event types in id order, the fields each
// declares sorted by path.
func eventTypes(ns *nodeSet) (types []uint32, parent map[uint32]uint32, fields map[uint32][]eventField) {
	refs := allRefs(ns)
	hier := hierarchical(ns, refs)
	isEvent, parent := subtypes(ns, refs, idBaseEventType, classObjectType)
	fields = map[uint32][]eventField{}
	for id := range isEvent {
		types = append(types, id)
		var walk func(from uint32, prefix string, depth int)
		walk = func(from uint32, prefix string, depth int) {
			if depth > 4 {
				return
			}
			for _, e := range refs[from] {
				c := ns.byID[e.target]
				if e.inverse || e.typ == idHasSubtype || !hier[e.typ] || c == nil || !declared(refs, c.id) {
					continue
				}
				path := prefix + c.browseName
				switch c.class {
				case classVariable:
					fields[id] = append(fields[id], eventField{path, c.dataType, c.valueRank})
					walk(c.id, path+"/", depth+1)
				case classObject:
					walk(c.id, path+"/", depth+1)
				}
			}
		}
		walk(id, "", 0)
		slices.SortFunc(fields[id], func(a, b eventField) int { return strings.Compare(a.path, b.path) })
		fields[id] = slices.CompactFunc(fields[id], func(a, b eventField) bool { return a.path == b.path })
	}
	slices.Sort(types)
	return types, parent, fields
}

// declared reports whether node id is an instance declaration: it has a
// ModellingRule.
func declared(refs map[uint32][]edge, id uint32) bool {
	for _, e := range refs[id] {
		if e.typ == idHasModellingRule && !e.inverse {
			return true
		}
	}
	return false
}

// hierarchical returns HierarchicalReferences and its subtypes.
func hierarchical(ns *nodeSet, refs map[uint32][]edge) map[uint32]bool {
	hier, _ := subtypes(ns, refs, idHierarchicalReferences, classReferenceType)
	return hier
}

// subtypes returns root and its subtypes of node class class, and the
// supertype of each subtype.
func subtypes(ns *nodeSet, refs map[uint32][]edge, root uint32, class uint8) (set map[uint32]bool, parent map[uint32]uint32) {
	set, parent = map[uint32]bool{root: true}, map[uint32]uint32{}
	for changed := true; changed; {
		changed = false
		for _, n := range ns.nodes {
			if n.class != class || set[n.id] {
				continue
			}
			for _, e := range refs[n.id] {
				if e.typ == idHasSubtype && e.inverse && set[e.target] {
					set[n.id], parent[n.id] = true, e.target
					changed = true
				}
			}
		}
	}
	return set, parent
}

// generateEvents returns the gofmt'ed zz_eventtypes.go of package events.
func generateEvents(path string) ([]byte, error) {
	ns, err := parse(path)
	if err != nil {
		return nil, err
	}
	types, parent, fields := eventTypes(ns)
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("\npackage events\n\n")
	b.WriteString("// ns0EventTypes are the event types of namespace 0: id, supertype,\n")
	b.WriteString("// browse name and the fields the type declares (path, DataType, ValueRank).\n")
	b.WriteString("var ns0EventTypes = [...]eventTypeDecl{\n")
	for _, id := range types {
		n := ns.byID[id]
		fmt.Fprintf(&b, "\t{%d, %d, %q, []fieldDecl{", id, parent[id], n.browseName)
		for i, f := range fields[id] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "{%q, %d, %d}", f.path, f.dataType, f.valueRank)
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
