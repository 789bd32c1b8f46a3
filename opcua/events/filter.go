package events

import (
	"sync"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// Field is an event field a filter reads, as the Model resolved it.
type Field int32

// Model is what filters are compiled against: the event types the server
// emits and the fields of their events.
type Model interface {
	// EventType reports whether t is BaseEventType or one of its subtypes.
	EventType(t ua.NodeID) bool
	// Subtype reports whether t is base or one of its subtypes.
	Subtype(t, base ua.NodeID) bool
	// Field resolves the field at path of events of type typeDef (or of
	// its subtypes); false when no event of that type has one, which a
	// filter then reads as null.
	Field(typeDef ua.NodeID, path []ua.QualifiedName) (Field, bool)
}

// Event is an event as a filter reads it.
type Event interface {
	// EventType is the event's type.
	EventType() ua.NodeID
	// Field returns the value of field f, nil when the event has none;
	// the filter does not keep it.
	Field(f Field) *ua.Variant
	// ConditionID is the NodeId of the condition the event reports (the
	// NodeId attribute of its ConditionType), nil for other events.
	ConditionID() *ua.Variant
}

// FieldLister is an Event that lists the fields it may have (a superset
// of those whose Field is not nil), so that who wants all of them need
// not ask for every field of every type.
type FieldLister interface {
	Fields() []Field
}

// Limits of a filter: more is Bad_EventFilterInvalid.
const (
	MaxSelectClauses = 256
	MaxElements      = 64
	MaxOperands      = 64
)

// Filter is a compiled EventFilter: its select clauses resolved to
// fields, its where clause checked and ordered so that each event is
// decided in one pass over the elements the first one reaches. Its
// methods are safe to call from any goroutine and do not allocate.
type Filter struct {
	selects []operand
	where   []element
	order   []int // the elements reached from the first, last first
	mu      sync.Mutex
	res     []val // the elements' results while an event is decided
	model   Model
}

// operand is a compiled operand.
type operand struct {
	kind  uint8
	lit   val
	elem  int
	field Field
	rng   *addrspace.NumericRange
}

const (
	opNull      uint8 = iota // selects null: a field no event has
	opLiteral                // lit
	opElement                // the result of element elem
	opField                  // field
	opCondition              // the event's ConditionId
)

// element is a compiled ContentFilterElement.
type element struct {
	op   ua.FilterOperator
	args []operand
	cast ua.TypeID // Cast: the type
}

// operandCounts are the operands each operator takes: min, max.
var operandCounts = [...][2]int{
	ua.FilterOperatorEquals:             {2, 2},
	ua.FilterOperatorIsNull:             {1, 1},
	ua.FilterOperatorGreaterThan:        {2, 2},
	ua.FilterOperatorLessThan:           {2, 2},
	ua.FilterOperatorGreaterThanOrEqual: {2, 2},
	ua.FilterOperatorLessThanOrEqual:    {2, 2},
	ua.FilterOperatorLike:               {2, 2},
	ua.FilterOperatorNot:                {1, 1},
	ua.FilterOperatorBetween:            {3, 3},
	ua.FilterOperatorInList:             {2, MaxOperands},
	ua.FilterOperatorAnd:                {2, 2},
	ua.FilterOperatorOr:                 {2, 2},
	ua.FilterOperatorCast:               {2, 2},
	ua.FilterOperatorInView:             {1, 1},
	ua.FilterOperatorOfType:             {1, 1},
	ua.FilterOperatorRelatedTo:          {6, 6},
	ua.FilterOperatorBitwiseAnd:         {2, 2},
	ua.FilterOperatorBitwiseOr:          {2, 2},
}

var (
	baseEventType = ua.NewNumericNodeID(0, id.BaseEventType)
	conditionType = ua.NewNumericNodeID(0, id.ConditionType)
)

// Compile checks ef against m and compiles it. On any error it returns
// Bad_EventFilterInvalid, nil, and res says which clause, element or
// operand is wrong (OPC 10000-4 §7.22.3); res is empty when all is well.
func Compile(m Model, ef *ua.EventFilter) (f *Filter, res ua.EventFilterResult, code ua.StatusCode) {
	n, ne := len(ef.SelectClauses), len(ef.WhereClause.Elements)
	if n == 0 || n > MaxSelectClauses || ne > MaxElements {
		return nil, res, status.BadEventFilterInvalid
	}
	f = &Filter{model: m, selects: make([]operand, n), where: make([]element, ne), res: make([]val, ne)}
	bad := false
	sel := make([]ua.StatusCode, n)
	for i := range ef.SelectClauses {
		f.selects[i], sel[i] = compileField(m, &ef.SelectClauses[i])
		bad = bad || sel[i] != status.Good
	}
	elems := make([]ua.ContentFilterElementResult, ne)
	for i := range ef.WhereClause.Elements {
		if f.compileElement(i, &ef.WhereClause.Elements[i], &elems[i]) {
			bad = true
		}
	}
	if bad {
		res.SelectClauseResults = sel
		res.WhereClauseResult.ElementResults = elems
		return nil, res, status.BadEventFilterInvalid
	}
	f.order = reached(f.where)
	return f, res, status.Good
}

// compileField resolves a SimpleAttributeOperand: a field of the event
// (the Value attribute), or the ConditionId (the NodeId attribute of the
// ConditionType itself). A path no event has selects null.
func compileField(m Model, o *ua.SimpleAttributeOperand) (operand, ua.StatusCode) {
	typ := o.TypeDefinitionID
	if typ.IsNull() {
		typ = baseEventType
	}
	if !m.EventType(typ) {
		return operand{}, status.BadTypeDefinitionInvalid
	}
	var op operand
	if o.IndexRange != "" {
		r, err := addrspace.ParseNumericRange(o.IndexRange)
		if err != nil {
			return operand{}, status.BadIndexRangeInvalid
		}
		op.rng = &r
	}
	switch o.AttributeID {
	case uint32(ua.AttributeIDNodeID):
		if len(o.BrowsePath) == 0 && m.Subtype(typ, conditionType) {
			op.kind = opCondition
		}
		return op, status.Good
	case uint32(ua.AttributeIDValue):
	default:
		return operand{}, status.BadAttributeIDInvalid
	}
	for _, q := range o.BrowsePath {
		if q.Name == "" {
			return operand{}, status.BadBrowseNameInvalid
		}
	}
	if fld, ok := m.Field(typ, o.BrowsePath); ok {
		op.kind, op.field = opField, fld
	}
	return op, status.Good
}

// compileElement compiles element i into f.where[i] and fills r; true
// when it is bad.
func (f *Filter) compileElement(i int, e *ua.ContentFilterElement, r *ua.ContentFilterElementResult) bool {
	el := &f.where[i]
	el.op = e.FilterOperator
	if e.FilterOperator < 0 || int(e.FilterOperator) >= len(operandCounts) {
		r.StatusCode = status.BadFilterOperatorInvalid
		return true
	}
	if c := operandCounts[e.FilterOperator]; len(e.FilterOperands) < c[0] || len(e.FilterOperands) > c[1] {
		r.StatusCode = status.BadFilterOperandCountMismatch
		return true
	}
	if e.FilterOperator == ua.FilterOperatorInView || e.FilterOperator == ua.FilterOperatorRelatedTo {
		r.StatusCode = status.BadFilterOperatorUnsupported // they relate nodes, not events
		return true
	}
	el.args = make([]operand, len(e.FilterOperands))
	codes := make([]ua.StatusCode, len(e.FilterOperands))
	bad := false
	for k := range e.FilterOperands {
		el.args[k], codes[k] = f.compileOperand(i, &e.FilterOperands[k])
		bad = bad || codes[k] != status.Good
	}
	if !bad {
		switch e.FilterOperator {
		case ua.FilterOperatorOfType:
			a := &el.args[0]
			if a.kind != opLiteral || a.lit.t != ua.TypeNodeID || !f.model.EventType(a.lit.id.NodeID) {
				codes[0], bad = status.BadFilterOperandInvalid, true
			}
		case ua.FilterOperatorCast:
			a := &el.args[1]
			t, ok := castType(a)
			if !ok {
				codes[1], bad = status.BadFilterOperandInvalid, true
			}
			el.cast = t
		}
	}
	if bad {
		r.StatusCode = status.BadFilterOperandInvalid
		r.OperandStatusCodes = codes
	}
	return bad
}

// compileOperand compiles operand k of element i.
func (f *Filter) compileOperand(i int, x *ua.ExtensionObject) (operand, ua.StatusCode) {
	switch o := x.Body.(type) {
	case *ua.LiteralOperand:
		if o.Value.Type() > ua.TypeDiagnosticInfo {
			return operand{}, status.BadFilterLiteralInvalid
		}
		v := o.Value
		return operand{kind: opLiteral, lit: fromVariant(&v)}, status.Good
	case *ua.ElementOperand:
		// Only later elements: no loop can be built (§7.7.4.2).
		if int(o.Index) <= i || int(o.Index) >= len(f.where) {
			return operand{}, status.BadFilterElementInvalid
		}
		return operand{kind: opElement, elem: int(o.Index)}, status.Good
	case *ua.SimpleAttributeOperand:
		return compileField(f.model, o)
	case *ua.AttributeOperand:
		return operand{}, status.BadFilterOperandInvalid // nodes, not event fields
	}
	return operand{}, status.BadFilterOperandInvalid
}

// castType returns the built-in type a Cast's second operand names (a
// NodeId or the name of a built-in DataType).
func castType(a *operand) (ua.TypeID, bool) {
	if a.kind != opLiteral {
		return 0, false
	}
	if a.lit.t == ua.TypeNodeID {
		n := a.lit.id.NodeID
		if n.Namespace == 0 && n.Type == ua.IDNumeric && n.Numeric >= 1 && n.Numeric <= uint32(ua.TypeLocalizedText) {
			return ua.TypeID(n.Numeric), true
		}
	}
	return 0, false
}

// reached returns the elements the first one reaches, in the order they
// are computed: each after those it reads (a higher index).
func reached(where []element) []int {
	if len(where) == 0 {
		return nil
	}
	seen := make([]bool, len(where))
	seen[0] = true
	for i := range where {
		if !seen[i] {
			continue
		}
		for _, a := range where[i].args {
			if a.kind == opElement {
				seen[a.elem] = true
			}
		}
	}
	var order []int
	for i := len(where) - 1; i >= 0; i-- {
		if seen[i] {
			order = append(order, i)
		}
	}
	return order
}

// Match reports whether ev passes the where clause: it does when there is
// none, or when the first element is TRUE.
func (f *Filter) Match(ev Event) bool {
	if len(f.where) == 0 {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, i := range f.order {
		f.res[i] = f.eval(&f.where[i], ev)
	}
	r := f.res[0]
	clear(f.res)
	return r.t == ua.TypeBoolean && r.n != 0
}

// Select fills out with the select clauses' values for ev (one per
// clause, null for a field the event has not) and returns it.
func (f *Filter) Select(ev Event, out []ua.Variant) []ua.Variant {
	if cap(out) < len(f.selects) {
		out = make([]ua.Variant, 0, len(f.selects))
	}
	out = out[:0]
	for i := range f.selects {
		out = append(out, ua.Variant{})
		f.selectInto(&f.selects[i], ev, &out[len(out)-1])
	}
	return out
}

func (f *Filter) selectInto(o *operand, ev Event, v *ua.Variant) {
	switch o.kind {
	case opField:
		p := ev.Field(o.field)
		if p == nil {
			return
		}
		*v = *p
		if o.rng != nil {
			if r, code := o.rng.Apply(*p); code == status.Good {
				*v = r
			} else {
				v.Reset()
			}
		}
	case opCondition:
		if c := ev.ConditionID(); c != nil {
			*v = *c
		}
	}
}

// value resolves an operand for ev.
func (f *Filter) value(o *operand, ev Event) val {
	switch o.kind {
	case opLiteral:
		return o.lit
	case opElement:
		return f.res[o.elem]
	case opField:
		p := ev.Field(o.field)
		if p == nil {
			return null
		}
		if o.rng != nil {
			r, code := o.rng.Apply(*p)
			if code != status.Good {
				return null
			}
			return fromVariant(&r)
		}
		return fromVariant(p)
	case opCondition:
		if c := ev.ConditionID(); c != nil {
			return fromVariant(c)
		}
	}
	return null
}

// eval computes element e for ev. Comparisons and logic are
// three-valued: NULL (a missing field) compares as NULL, And and Or
// follow SQL's truth tables, and the event passes only on TRUE.
func (f *Filter) eval(e *element, ev Event) val {
	a := f.value(&e.args[0], ev)
	switch e.op {
	case ua.FilterOperatorIsNull:
		return boolVal(a.t == ua.TypeNull)
	case ua.FilterOperatorNot:
		if a.t != ua.TypeBoolean {
			return null
		}
		return boolVal(a.n == 0)
	case ua.FilterOperatorOfType:
		return boolVal(f.model.Subtype(ev.EventType(), a.id.NodeID))
	case ua.FilterOperatorAnd, ua.FilterOperatorOr:
		return logic(e.op, a, f.value(&e.args[1], ev))
	case ua.FilterOperatorInList:
		if a.t == ua.TypeNull {
			return null
		}
		for k := 1; k < len(e.args); k++ {
			if equal(a, f.value(&e.args[k], ev)) {
				return boolVal(true)
			}
		}
		return boolVal(false)
	case ua.FilterOperatorBetween:
		lo, hi := f.value(&e.args[1], ev), f.value(&e.args[2], ev)
		if a.t == ua.TypeNull || lo.t == ua.TypeNull || hi.t == ua.TypeNull {
			return null
		}
		c1, ok1 := order(a, lo)
		c2, ok2 := order(a, hi)
		return boolVal(ok1 && ok2 && c1 >= 0 && c2 <= 0)
	case ua.FilterOperatorCast:
		if a.t == ua.TypeNull {
			return null
		}
		r, ok := convert(a, e.cast, true)
		if !ok {
			return null
		}
		return r
	}
	b := f.value(&e.args[1], ev)
	if a.t == ua.TypeNull || b.t == ua.TypeNull {
		return null
	}
	switch e.op {
	case ua.FilterOperatorEquals:
		return boolVal(equal(a, b))
	case ua.FilterOperatorGreaterThan, ua.FilterOperatorLessThan, ua.FilterOperatorGreaterThanOrEqual, ua.FilterOperatorLessThanOrEqual:
		c, ok := order(a, b)
		if !ok {
			return boolVal(false)
		}
		switch e.op {
		case ua.FilterOperatorGreaterThan:
			return boolVal(c > 0)
		case ua.FilterOperatorLessThan:
			return boolVal(c < 0)
		case ua.FilterOperatorGreaterThanOrEqual:
			return boolVal(c >= 0)
		}
		return boolVal(c <= 0)
	case ua.FilterOperatorLike:
		s, ok1 := convert(a, ua.TypeString, false)
		p, ok2 := convert(b, ua.TypeString, false)
		return boolVal(ok1 && ok2 && like(s.s, p.s))
	case ua.FilterOperatorBitwiseAnd, ua.FilterOperatorBitwiseOr:
		x, y, ok := common(a, b)
		if !ok || !isInteger(x.t) {
			return null
		}
		if e.op == ua.FilterOperatorBitwiseAnd {
			return val{t: x.t, n: x.n & y.n}
		}
		return val{t: x.t, n: x.n | y.n}
	}
	return null
}

// logic is And or Or of a and b, NULL for what is not a Boolean.
func logic(op ua.FilterOperator, a, b val) val {
	ta, tb := tri(a), tri(b)
	if op == ua.FilterOperatorAnd {
		switch {
		case ta == 0 || tb == 0:
			return boolVal(false)
		case ta == 1 && tb == 1:
			return boolVal(true)
		}
		return null
	}
	switch {
	case ta == 1 || tb == 1:
		return boolVal(true)
	case ta == 0 && tb == 0:
		return boolVal(false)
	}
	return null
}

// tri is a value as a truth: 1 TRUE, 0 FALSE, -1 NULL.
func tri(x val) int {
	if x.t != ua.TypeBoolean {
		return -1
	}
	return int(x.n & 1)
}
