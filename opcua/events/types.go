package events

import (
	"strconv"
	"strings"

	"github.com/edged/edged/opcua/ua"
)

//go:generate go run ../internal/nsgen -schema ../../../shared/opcua-schema -events -out zz_eventtypes.go

// eventTypeDecl is an event type of the NodeSet (zz_eventtypes.go).
type eventTypeDecl struct {
	id, parent uint32
	name       string
	fields     []fieldDecl
}

// fieldDecl is a field an event type declares: its browse path ('/'
// between names), DataType and ValueRank.
type fieldDecl struct {
	path      string
	dataType  uint32
	valueRank int32
}

// Types is the event types a server emits and the fields of their events:
// namespace 0's, from the NodeSet, and any the server adds. It is a
// Model. Fields are numbered by browse path, so that a field declared by a
// type and by a subtype again is one Field. Types is not safe for
// concurrent changes; filters only read it.
type Types struct {
	parent map[ua.NodeID]ua.NodeID
	names  map[ua.NodeID]string // namespace 0's, by type
	fields map[string]Field
	paths  []string // by Field
}

// NewTypes returns the event types of namespace 0.
func NewTypes() *Types {
	t := &Types{parent: map[ua.NodeID]ua.NodeID{}, names: map[ua.NodeID]string{}, fields: map[string]Field{}}
	for i := range ns0EventTypes {
		d := &ns0EventTypes[i]
		paths := make([]string, len(d.fields))
		for k, f := range d.fields {
			paths[k] = f.path
		}
		var parent ua.NodeID
		if d.parent != 0 {
			parent = ua.NewNumericNodeID(0, d.parent)
		}
		t.Add(ua.NewNumericNodeID(0, d.id), parent, paths...)
		t.names[ua.NewNumericNodeID(0, d.id)] = d.name
	}
	return t
}

// Name returns the browse name of event type typ of namespace 0 ("" for
// another).
func (t *Types) Name(typ ua.NodeID) string { return t.names[typ] }

// Add adds event type typ, a subtype of parent (null for BaseEventType
// itself), declaring the fields at paths ('/' between the browse names,
// "ns:Name" for a name outside namespace 0).
func (t *Types) Add(typ, parent ua.NodeID, paths ...string) {
	t.parent[typ] = parent
	for _, p := range paths {
		t.FieldOf(p)
	}
}

// FieldOf returns the Field of path, numbering it if it is new: an
// event source fills its events' values by it.
func (t *Types) FieldOf(path string) Field {
	f, ok := t.fields[path]
	if !ok {
		f = Field(len(t.paths))
		t.fields[path] = f
		t.paths = append(t.paths, path)
	}
	return f
}

// Path returns the browse path of field f.
func (t *Types) Path(f Field) string { return t.paths[f] }

// Known returns the Field of path, false if it has none.
func (t *Types) Known(path string) (Field, bool) {
	f, ok := t.fields[path]
	return f, ok
}

// Fields is the number of Fields.
func (t *Types) Fields() int { return len(t.paths) }

// EventType reports whether typ is an event type.
func (t *Types) EventType(typ ua.NodeID) bool {
	_, ok := t.parent[typ]
	return ok
}

// Subtype reports whether typ is base or one of its subtypes.
func (t *Types) Subtype(typ, base ua.NodeID) bool {
	for range 64 {
		if typ == base {
			return true
		}
		p, ok := t.parent[typ]
		if !ok || p.IsNull() {
			return false
		}
		typ = p
	}
	return false
}

// Field resolves the field at path on events of type typ: one that typ or
// a supertype declares, or, as clients name subtypes' fields on
// BaseEventType (node-opcua's alarm list does), one that any event type
// declares: an event that has not the field selects null.
func (t *Types) Field(typ ua.NodeID, path []ua.QualifiedName) (Field, bool) {
	var b strings.Builder
	for i, q := range path {
		if i > 0 {
			b.WriteByte('/')
		}
		if q.NamespaceIndex != 0 {
			b.WriteString(strconv.Itoa(int(q.NamespaceIndex)))
			b.WriteByte(':')
		}
		b.WriteString(q.Name)
	}
	f, ok := t.fields[b.String()]
	return f, ok
}
