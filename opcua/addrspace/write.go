package addrspace

import (
	"math"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Write performs one operation of the Write service (OPC 10000-4 §5.10.4)
// for user (nil: every right the node grants) and returns its result.
//
// The Value of a Variable needs CurrentWrite in its AccessLevel (else
// BadNotWritable) and in the user's (else BadUserAccessDenied); the Value
// of a VariableType needs ValueForVariableType in its WriteMask. A status
// other than Good needs StatusWrite, a source timestamp TimestampWrite,
// and a server timestamp is never written: BadWriteNotSupported. The
// value must suit the variable (see CheckValue: BadTypeMismatch). An
// IndexRange of one dimension replaces that many elements of an array (or
// bytes of a String or ByteString): the value must have exactly as many
// (BadIndexRangeDataMismatch); a range past the end of the stored value is
// BadIndexRangeNoData; ranges of more dimensions are BadWriteNotSupported.
//
// A variable with a Sink passes the checked write to it (IndexRange
// included) and, when the sink answers later (a Pending result: the write
// went to a device), Write waits for that answer after releasing the
// Space's lock, so reads, browses and other writes go on meanwhile; a
// server that bounds the wait, or waits for several writes at once, uses
// WriteStart. An external variable (Source set) without a Sink is
// BadNotWritable; a static variable stores a copy of the value, with the
// written status and source timestamp (the clock's time when none is
// given).
//
// Other attributes can be written when the node's WriteMask and the
// user's allow it: DisplayName, Description, WriteMask, AccessLevel,
// EventNotifier, MinimumSamplingInterval and Historizing, each with a
// scalar of its type (BadTypeMismatch), and without IndexRange
// (BadIndexRangeNoData), status or timestamps (BadWriteNotSupported).
// Any other attribute is BadNotWritable.
func (s *Space) Write(wv *ua.WriteValue, user User) ua.StatusCode {
	st, p := s.WriteStart(wv, user)
	if p != nil {
		return <-p
	}
	return st
}

// WriteStart is Write without the wait: when the variable's sink answers
// later it returns Good and the Pending result, which delivers the
// operation's result once; else the result and nil. The Space's lock is
// not held when WriteStart returns, so the caller may wait for any number
// of pending writes at once, with a timeout of its own.
func (s *Space) WriteStart(wv *ua.WriteValue, user User) (ua.StatusCode, Pending) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.lookupInto(&wv.NodeID, &s.wnode, &s.wdv) // the lock is exclusive: the scratch is Write's
	if n == nil {
		return status.BadNodeIDUnknown, nil
	}
	attr := ua.AttributeID(wv.AttributeID)
	if !hasAttribute(n.Class, attr) {
		return status.BadAttributeIDInvalid, nil
	}
	r, err := ParseNumericRange(wv.IndexRange)
	if err != nil {
		return status.BadIndexRangeInvalid, nil
	}
	if attr == ua.AttributeIDValue {
		return s.writeValue(n, wv, &r, user)
	}
	return s.writeAttribute(n, attr, wv, &r, user), nil
}

func (s *Space) writeValue(n *Node, wv *ua.WriteValue, r *NumericRange, user User) (ua.StatusCode, Pending) {
	if n.Class == ua.NodeClassVariable {
		if n.AccessLevel&uint8(ua.AccessLevelTypeCurrentWrite) == 0 {
			return status.BadNotWritable, nil
		}
		if user != nil && user.AccessLevel(n)&uint8(ua.AccessLevelTypeCurrentWrite) == 0 {
			return status.BadUserAccessDenied, nil
		}
	} else {
		bit := uint32(ua.AttributeWriteMaskValueForVariableType)
		if n.WriteMask&bit == 0 {
			return status.BadNotWritable, nil
		}
		if user != nil && user.WriteMask(n)&bit == 0 {
			return status.BadUserAccessDenied, nil
		}
	}
	dv := &wv.Value
	v := dv.Value
	if r.n == 0 {
		if st := s.checkValue(n, &v); st != status.Good {
			return st, nil
		}
	} else if r.n > 1 {
		return status.BadWriteNotSupported, nil
	} else if !s.builtinMatches(s.nodes.get(n.DataType), v) && !(v.Type() == ua.TypeByteString && isByteArrayType(s, n)) {
		return status.BadTypeMismatch, nil
	}
	// A wrongly typed value is Bad_TypeMismatch, with timestamps or not.
	if dv.Status != status.Good && n.AccessLevel&uint8(ua.AccessLevelTypeStatusWrite) == 0 ||
		ua.DateTimeTicks(dv.SourceTimestamp) != 0 && n.AccessLevel&uint8(ua.AccessLevelTypeTimestampWrite) == 0 ||
		ua.DateTimeTicks(dv.ServerTimestamp) != 0 {
		return status.BadWriteNotSupported, nil
	}
	if n.Sink != nil {
		return n.Sink.WriteValue(n.Handle, wv)
	}
	if n.Source != 0 {
		return status.BadNotWritable, nil
	}
	var nv ua.Variant
	if r.n == 0 {
		var ok bool
		if nv, ok = cloneVariant(v); !ok {
			return status.BadTypeMismatch, nil
		}
	} else {
		var st ua.StatusCode
		if nv, st = writeRange(n.StaticValue(), v, r); st != status.Good {
			return st, nil
		}
	}
	ts, ps := dv.SourceTimestamp, dv.SourcePicoseconds
	if ua.DateTimeTicks(ts) == 0 {
		ts, ps = s.clock(), 0
	}
	n.setValue(ua.DataValue{Value: nv, Status: dv.Status, SourceTimestamp: ts, SourcePicoseconds: ps})
	return status.Good, nil
}

// isByteArrayType reports whether n holds an array of Byte, which a
// ByteString may be written to.
func isByteArrayType(s *Space, n *Node) bool {
	return builtinOf(s.nodes.get(n.DataType)) == ua.TypeByte && n.ValueRank != ValueRankScalar
}

// CheckValue reports whether v suits variable (or VariableType) id: its
// built-in type must be the one of the DataType or of a subtype of it
// (any for BaseDataType, numbers for Number, Integer and UInteger, Int32
// for an Enumeration, an ExtensionObject for a Structure, whose body, when
// its encoding is a node of the space, must be of a subtype of the
// DataType), and its shape must suit the ValueRank. A null value suits
// only BaseDataType. A ByteString suits a one-dimensional Byte array (and
// is stored as one). The answer is Good or BadTypeMismatch (also for an
// unknown node).
func (s *Space) CheckValue(id ua.NodeID, v ua.Variant) ua.StatusCode {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.lookup(id)
	if n == nil || n.Class != ua.NodeClassVariable && n.Class != ua.NodeClassVariableType {
		return status.BadTypeMismatch
	}
	return s.checkValue(n, &v)
}

// ValueRank values of OPC 10000-3 §5.6.2; n > 0 is an array of n
// dimensions.
const (
	ValueRankScalarOrOneDimension int32 = -3
	ValueRankAny                  int32 = -2
	ValueRankScalar               int32 = -1
	ValueRankOneOrMoreDimensions  int32 = 0
	ValueRankOneDimension         int32 = 1
)

func (s *Space) checkValue(n *Node, v *ua.Variant) ua.StatusCode {
	dt := s.nodes.get(n.DataType)
	if v.IsNull() {
		if dt == s.baseDataType {
			return status.Good
		}
		return status.BadTypeMismatch
	}
	if v.Type() == ua.TypeByteString && !v.IsArray() && isByteArrayType(s, n) &&
		(n.ValueRank == 1 || n.ValueRank == ValueRankOneOrMoreDimensions || n.ValueRank == ValueRankAny ||
			n.ValueRank == ValueRankScalarOrOneDimension) {
		b, _ := v.ByteString()
		*v = ua.NewByteArray(b)
		return status.Good
	}
	if !s.builtinMatches(dt, *v) {
		return status.BadTypeMismatch
	}
	if v.Type() == ua.TypeExtensionObject && dt != s.structure && !s.bodiesMatch(dt, *v) {
		return status.BadTypeMismatch
	}
	nd := 0
	if v.IsArray() {
		nd = max(len(v.ArrayDimensions()), 1)
	}
	ok := false
	switch vr := n.ValueRank; {
	case vr == ValueRankAny:
		ok = true
	case vr == ValueRankScalar:
		ok = nd == 0
	case vr == ValueRankScalarOrOneDimension:
		ok = nd <= 1
	case vr == ValueRankOneOrMoreDimensions:
		ok = nd >= 1
	case vr > 0:
		ok = nd == int(vr)
	}
	if !ok {
		return status.BadTypeMismatch
	}
	return status.Good
}

// builtinOf returns the built-in type of DataType dt: that of the nearest
// built-in type among dt and its supertypes, TypeNull for abstract ones
// (BaseDataType, Number, Integer, UInteger) and an unknown dt,
// ExtensionObject for Structures and Int32 for Enumerations.
func builtinOf(dt *Node) ua.TypeID {
	for t := dt; t != nil; t = t.super {
		if t.ID.Namespace != 0 || t.ID.Type != ua.IDNumeric {
			continue
		}
		switch id := t.ID.Numeric; {
		case id >= 1 && id <= 25 && id != idStructure && id != idBaseDataType:
			return ua.TypeID(id)
		case id == idStructure:
			return ua.TypeExtensionObject
		case id == idEnumeration:
			return ua.TypeInt32
		case id == idBaseDataType, id == idNumber, id == idInteger, id == idUInteger:
			return ua.TypeNull
		}
	}
	return ua.TypeNull
}

// builtinMatches reports whether v's built-in type suits DataType dt.
func (s *Space) builtinMatches(dt *Node, v ua.Variant) bool {
	if dt == nil {
		return false
	}
	if b := builtinOf(dt); b != ua.TypeNull {
		return v.Type() == b
	}
	t := v.Type()
	for a := dt; a != nil; a = a.super {
		if a.ID.Namespace != 0 || a.ID.Type != ua.IDNumeric {
			continue
		}
		switch a.ID.Numeric {
		case idBaseDataType:
			return true
		case idNumber:
			return t >= ua.TypeSByte && t <= ua.TypeDouble
		case idInteger:
			return t == ua.TypeSByte || t == ua.TypeInt16 || t == ua.TypeInt32 || t == ua.TypeInt64
		case idUInteger:
			return t == ua.TypeByte || t == ua.TypeUInt16 || t == ua.TypeUInt32 || t == ua.TypeUInt64
		}
	}
	return false
}

// bodiesMatch checks the ExtensionObjects of v against Structure dt, as
// far as their encodings are nodes of the space.
func (s *Space) bodiesMatch(dt *Node, v ua.Variant) bool {
	check := func(eo *ua.ExtensionObject) bool {
		enc := eo.TypeID
		if eo.Body != nil {
			enc = eo.Body.BinaryEncodingID()
		}
		en := s.nodes.get(enc)
		if en == nil {
			return true // cannot tell
		}
		for _, r := range en.refs {
			if r.typ == s.hasEncoding && r.inverse {
				return isSubtype(r.target, dt)
			}
		}
		return true
	}
	switch x := v.Value().(type) {
	case ua.ExtensionObject:
		return check(&x)
	case []ua.ExtensionObject:
		for i := range x {
			if !check(&x[i]) {
				return false
			}
		}
	}
	return true
}

// cloneLimits let cloneVariant copy anything the codec can hold.
var cloneLimits = ua.Limits{
	MaxStringLength:     math.MaxInt32,
	MaxByteStringLength: math.MaxInt32,
	MaxArrayLength:      math.MaxInt32,
	MaxDepth:            ua.DefaultLimits.MaxDepth,
}

// cloneVariant returns a deep copy of v (through its encoding), so that a
// stored value shares nothing with a request buffer.
func cloneVariant(v ua.Variant) (ua.Variant, bool) {
	b := v.Encode(nil)
	d := ua.NewDecoder(b)
	d.Limits = cloneLimits
	var out ua.Variant
	out.Decode(d)
	return out, d.Err() == nil
}

// writeRange returns a copy of old with the elements of range r (one
// dimension) replaced by those of v.
func writeRange(old, v ua.Variant, r *NumericRange) (ua.Variant, ua.StatusCode) {
	lo, hi := int64(r.lo[0]), int64(r.hi[0])
	want := int(hi - lo + 1)
	if old.IsNull() {
		return ua.Variant{}, status.BadIndexRangeNoData
	}
	if !old.IsArray() {
		switch old.Type() {
		case ua.TypeString:
			s, _ := old.StringValue()
			w, ok := v.StringValue()
			if !ok || v.Type() != ua.TypeString {
				return ua.Variant{}, status.BadTypeMismatch
			}
			if hi >= int64(len(s)) {
				return ua.Variant{}, status.BadIndexRangeNoData
			}
			if len(w) != want {
				return ua.Variant{}, status.BadIndexRangeDataMismatch
			}
			var out ua.Variant
			out.SetString(s[:lo] + w + s[hi+1:])
			return out, status.Good
		case ua.TypeByteString:
			b, _ := old.ByteString()
			w, ok := v.ByteString()
			if !ok {
				return ua.Variant{}, status.BadTypeMismatch
			}
			if hi >= int64(len(b)) {
				return ua.Variant{}, status.BadIndexRangeNoData
			}
			if len(w) != want {
				return ua.Variant{}, status.BadIndexRangeDataMismatch
			}
			out := append([]byte(nil), b...)
			copy(out[lo:], w)
			var nv ua.Variant
			nv.SetByteString(out)
			return nv, status.Good
		}
		return ua.Variant{}, status.BadIndexRangeNoData
	}
	if len(old.ArrayDimensions()) > 1 {
		return ua.Variant{}, status.BadWriteNotSupported
	}
	if hi >= int64(old.Len()) {
		return ua.Variant{}, status.BadIndexRangeNoData
	}
	if v.Type() == ua.TypeByteString && !v.IsArray() && old.Type() == ua.TypeByte {
		b, _ := v.ByteString()
		v = ua.NewByteArray(b)
	}
	if !v.IsArray() || v.Type() != old.Type() || len(v.ArrayDimensions()) > 1 {
		return ua.Variant{}, status.BadTypeMismatch
	}
	if v.Len() != want {
		return ua.Variant{}, status.BadIndexRangeDataMismatch
	}
	v, ok := cloneVariant(v)
	if !ok {
		return ua.Variant{}, status.BadTypeMismatch
	}
	return spliceArray(old, v, int(lo)), status.Good
}

// spliceArray returns a copy of array old with v's elements at lo.
func spliceArray(old, v ua.Variant, lo int) ua.Variant {
	switch o := old.Value().(type) {
	case []bool:
		return splice(o, v, lo)
	case []int8:
		return splice(o, v, lo)
	case []uint8:
		return splice(o, v, lo)
	case []int16:
		return splice(o, v, lo)
	case []uint16:
		return splice(o, v, lo)
	case []int32:
		return splice(o, v, lo)
	case []uint32:
		return splice(o, v, lo)
	case []int64:
		return splice(o, v, lo)
	case []uint64:
		return splice(o, v, lo)
	case []float32:
		return splice(o, v, lo)
	case []float64:
		return splice(o, v, lo)
	case []string:
		return splice(o, v, lo)
	case []time.Time:
		return splice(o, v, lo)
	case []ua.GUID:
		return splice(o, v, lo)
	case [][]byte:
		return splice(o, v, lo)
	case []ua.XMLElement:
		return splice(o, v, lo)
	case []ua.NodeID:
		return splice(o, v, lo)
	case []ua.ExpandedNodeID:
		return splice(o, v, lo)
	case []ua.StatusCode:
		return splice(o, v, lo)
	case []ua.QualifiedName:
		return splice(o, v, lo)
	case []ua.LocalizedText:
		return splice(o, v, lo)
	case []ua.ExtensionObject:
		return splice(o, v, lo)
	case []ua.DataValue:
		return splice(o, v, lo)
	case []ua.Variant:
		return splice(o, v, lo)
	case []ua.DiagnosticInfo:
		return splice(o, v, lo)
	}
	return old
}

func splice[T any](old []T, v ua.Variant, lo int) ua.Variant {
	out := append([]T(nil), old...)
	w, _ := v.Value().([]T)
	copy(out[lo:], w)
	if b, ok := any(out).([]byte); ok {
		return ua.NewByteArray(b)
	}
	return ua.MustVariant(out)
}

// writeMaskBits maps the writable attributes to their WriteMask bit.
var writeMaskBits = map[ua.AttributeID]ua.AttributeWriteMask{
	ua.AttributeIDDisplayName:             ua.AttributeWriteMaskDisplayName,
	ua.AttributeIDDescription:             ua.AttributeWriteMaskDescription,
	ua.AttributeIDWriteMask:               ua.AttributeWriteMaskWriteMask,
	ua.AttributeIDAccessLevel:             ua.AttributeWriteMaskAccessLevel,
	ua.AttributeIDEventNotifier:           ua.AttributeWriteMaskEventNotifier,
	ua.AttributeIDMinimumSamplingInterval: ua.AttributeWriteMaskMinimumSamplingInterval,
	ua.AttributeIDHistorizing:             ua.AttributeWriteMaskHistorizing,
}

func (s *Space) writeAttribute(n *Node, attr ua.AttributeID, wv *ua.WriteValue, r *NumericRange, user User) ua.StatusCode {
	bit, ok := writeMaskBits[attr]
	if !ok || n.WriteMask&uint32(bit) == 0 {
		return status.BadNotWritable
	}
	if user != nil && user.WriteMask(n)&uint32(bit) == 0 {
		return status.BadUserAccessDenied
	}
	if r.n > 0 {
		return status.BadIndexRangeNoData
	}
	dv := &wv.Value
	if dv.Status != status.Good || ua.DateTimeTicks(dv.SourceTimestamp) != 0 || ua.DateTimeTicks(dv.ServerTimestamp) != 0 {
		return status.BadWriteNotSupported
	}
	v := dv.Value
	switch attr {
	case ua.AttributeIDDisplayName, ua.AttributeIDDescription:
		lt, ok := v.Value().(ua.LocalizedText)
		if !ok || v.IsArray() {
			return status.BadTypeMismatch
		}
		lt = ua.LocalizedText{Locale: clone(lt.Locale), Text: clone(lt.Text)}
		if attr == ua.AttributeIDDisplayName {
			n.DisplayName = lt
		} else {
			n.Description = lt
		}
	case ua.AttributeIDWriteMask:
		x, ok := v.Uint32()
		if !ok {
			return status.BadTypeMismatch
		}
		n.WriteMask = x
	case ua.AttributeIDAccessLevel:
		x, ok := v.Uint8()
		if !ok {
			return status.BadTypeMismatch
		}
		n.AccessLevel = x
	case ua.AttributeIDEventNotifier:
		x, ok := v.Uint8()
		if !ok {
			return status.BadTypeMismatch
		}
		n.EventNotifier = x
	case ua.AttributeIDMinimumSamplingInterval:
		x, ok := v.Float64()
		if !ok {
			return status.BadTypeMismatch
		}
		n.MinimumSamplingInterval = x
	case ua.AttributeIDHistorizing:
		x, ok := v.Bool()
		if !ok {
			return status.BadTypeMismatch
		}
		n.Historizing = x
	}
	return status.Good
}

// clone copies s, which may alias a request buffer.
func clone(s string) string {
	if s == "" {
		return ""
	}
	return string([]byte(s))
}
