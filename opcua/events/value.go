package events

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/edged/edged/opcua/ua"
)

// val is an operand's value while a where clause is evaluated: a scalar
// of a built-in type, held without allocating. An array, or a type the
// filter operators do not take, is kept as its Variant (arr) and only
// compares equal to the same value.
type val struct {
	t  ua.TypeID // TypeNull: NULL
	n  uint64    // Boolean, integers (signed as their bits), floats (float64 bits), StatusCode, DateTime ticks
	s  string    // String, XmlElement, LocalizedText's text, QualifiedName's name
	s2 string    // LocalizedText's locale
	q  uint16    // QualifiedName's namespace
	id ua.ExpandedNodeID
	g  ua.GUID
	b  []byte      // ByteString
	v  *ua.Variant // arrays and other types, as given
}

var null = val{}

func boolVal(b bool) val {
	if b {
		return val{t: ua.TypeBoolean, n: 1}
	}
	return val{t: ua.TypeBoolean}
}

// fromVariant makes a val of v (shared, not copied).
func fromVariant(v *ua.Variant) val {
	if v.IsArray() {
		return val{t: v.Type(), v: v}
	}
	t := v.Type()
	switch t {
	case ua.TypeNull:
		return null
	case ua.TypeBoolean:
		b, _ := v.Bool()
		return boolVal(b)
	case ua.TypeSByte:
		x, _ := v.Int8()
		return val{t: t, n: uint64(int64(x))}
	case ua.TypeInt16:
		x, _ := v.Int16()
		return val{t: t, n: uint64(int64(x))}
	case ua.TypeInt32:
		x, _ := v.Int32()
		return val{t: t, n: uint64(int64(x))}
	case ua.TypeInt64:
		x, _ := v.Int64()
		return val{t: t, n: uint64(x)}
	case ua.TypeByte:
		x, _ := v.Uint8()
		return val{t: t, n: uint64(x)}
	case ua.TypeUInt16:
		x, _ := v.Uint16()
		return val{t: t, n: uint64(x)}
	case ua.TypeUInt32:
		x, _ := v.Uint32()
		return val{t: t, n: uint64(x)}
	case ua.TypeUInt64:
		x, _ := v.Uint64()
		return val{t: t, n: x}
	case ua.TypeFloat:
		x, _ := v.Float32()
		return val{t: t, n: math.Float64bits(float64(x))}
	case ua.TypeDouble:
		x, _ := v.Float64()
		return val{t: t, n: math.Float64bits(x)}
	case ua.TypeStatusCode:
		x, _ := v.StatusCode()
		return val{t: t, n: uint64(x)}
	case ua.TypeDateTime:
		x, _ := v.DateTime()
		return val{t: t, n: uint64(ua.DateTimeTicks(x))}
	case ua.TypeString:
		x, _ := v.StringValue()
		return val{t: t, s: x}
	case ua.TypeXMLElement:
		return val{t: t, s: v.String()}
	case ua.TypeByteString:
		x, _ := v.ByteString()
		return val{t: t, b: x}
	case ua.TypeGUID:
		x, _ := v.GUIDValue()
		return val{t: t, g: x}
	case ua.TypeNodeID:
		x, _ := v.NodeIDValue()
		return val{t: t, id: ua.ExpandedNodeID{NodeID: x}}
	case ua.TypeExpandedNodeID:
		x, _ := v.ExpandedNodeIDValue()
		return val{t: t, id: x}
	case ua.TypeQualifiedName:
		x, _ := v.QualifiedNameValue()
		return val{t: t, q: x.NamespaceIndex, s: x.Name}
	case ua.TypeLocalizedText:
		x, _ := v.LocalizedTextValue()
		return val{t: t, s: x.Text, s2: x.Locale}
	}
	return val{t: t, v: v}
}

// toVariant sets v to x (allocating for the types a Variant keeps behind
// a pointer).
func (x *val) toVariant(v *ua.Variant) {
	switch {
	case x.v != nil:
		*v = *x.v
		return
	case x.t == ua.TypeNull:
		v.Reset()
		return
	}
	switch x.t {
	case ua.TypeBoolean:
		v.SetBool(x.n != 0)
	case ua.TypeSByte:
		v.SetInt8(int8(x.n))
	case ua.TypeInt16:
		v.SetInt16(int16(x.n))
	case ua.TypeInt32:
		v.SetInt32(int32(x.n))
	case ua.TypeInt64:
		v.SetInt64(int64(x.n))
	case ua.TypeByte:
		v.SetUint8(uint8(x.n))
	case ua.TypeUInt16:
		v.SetUint16(uint16(x.n))
	case ua.TypeUInt32:
		v.SetUint32(uint32(x.n))
	case ua.TypeUInt64:
		v.SetUint64(x.n)
	case ua.TypeFloat:
		v.SetFloat32(float32(math.Float64frombits(x.n)))
	case ua.TypeDouble:
		v.SetFloat64(math.Float64frombits(x.n))
	case ua.TypeStatusCode:
		v.SetStatusCode(ua.StatusCode(x.n))
	case ua.TypeDateTime:
		v.SetDateTime(ua.TimeFromTicks(int64(x.n)))
	case ua.TypeString:
		v.SetString(x.s)
	case ua.TypeXMLElement:
		*v = ua.MustVariant(ua.XMLElement(x.s))
	case ua.TypeByteString:
		v.SetByteString(x.b)
	case ua.TypeGUID:
		*v = ua.MustVariant(x.g)
	case ua.TypeNodeID:
		*v = ua.MustVariant(x.id.NodeID)
	case ua.TypeExpandedNodeID:
		*v = ua.MustVariant(x.id)
	case ua.TypeQualifiedName:
		*v = ua.MustVariant(ua.QualifiedName{NamespaceIndex: x.q, Name: x.s})
	case ua.TypeLocalizedText:
		*v = ua.MustVariant(ua.LocalizedText{Locale: x.s2, Text: x.s})
	default:
		v.Reset()
	}
}

// precedence is the rank of a type in OPC 10000-4 §7.7.3's data
// precedence (1 first); 0: a type without one (DateTime, ByteString,
// XmlElement, ...), which converts to no other type implicitly.
func precedence(t ua.TypeID) int {
	switch t {
	case ua.TypeDouble:
		return 1
	case ua.TypeFloat:
		return 2
	case ua.TypeInt64:
		return 3
	case ua.TypeUInt64:
		return 4
	case ua.TypeInt32:
		return 5
	case ua.TypeUInt32:
		return 6
	case ua.TypeStatusCode:
		return 7
	case ua.TypeInt16:
		return 8
	case ua.TypeUInt16:
		return 9
	case ua.TypeSByte:
		return 10
	case ua.TypeByte:
		return 11
	case ua.TypeBoolean:
		return 12
	case ua.TypeGUID:
		return 13
	case ua.TypeString:
		return 14
	case ua.TypeExpandedNodeID:
		return 15
	case ua.TypeNodeID:
		return 16
	case ua.TypeLocalizedText:
		return 17
	case ua.TypeQualifiedName:
		return 18
	}
	return 0
}

func isInteger(t ua.TypeID) bool {
	switch t {
	case ua.TypeSByte, ua.TypeByte, ua.TypeInt16, ua.TypeUInt16, ua.TypeInt32, ua.TypeUInt32, ua.TypeInt64, ua.TypeUInt64:
		return true
	}
	return false
}

func isSigned(t ua.TypeID) bool {
	switch t {
	case ua.TypeSByte, ua.TypeInt16, ua.TypeInt32, ua.TypeInt64:
		return true
	}
	return false
}

// isNumeric: the types a number converts between (StatusCode and
// Boolean among them, as their codes and 0/1).
func isNumeric(t ua.TypeID) bool {
	return isInteger(t) || t == ua.TypeFloat || t == ua.TypeDouble || t == ua.TypeStatusCode || t == ua.TypeBoolean
}

// intRange is the range of an integer type (StatusCode as UInt32).
func intRange(t ua.TypeID) (lo int64, hi uint64) {
	switch t {
	case ua.TypeSByte:
		return math.MinInt8, math.MaxInt8
	case ua.TypeByte:
		return 0, math.MaxUint8
	case ua.TypeInt16:
		return math.MinInt16, math.MaxInt16
	case ua.TypeUInt16:
		return 0, math.MaxUint16
	case ua.TypeInt32:
		return math.MinInt32, math.MaxInt32
	case ua.TypeUInt32, ua.TypeStatusCode:
		return 0, math.MaxUint32
	case ua.TypeInt64:
		return math.MinInt64, math.MaxInt64
	case ua.TypeUInt64:
		return 0, math.MaxUint64
	}
	return 0, 0
}

// convert returns x as type t: implicitly (the conversions a comparison
// makes to the operand of higher precedence) or explicitly (Cast, which
// also turns numbers into Booleans and strings, and strings into
// anything they spell). false: no conversion, or the value does not fit.
func convert(x val, t ua.TypeID, explicit bool) (val, bool) {
	if x.t == t {
		return x, true
	}
	if x.t == ua.TypeNull || x.v != nil {
		return null, false
	}
	switch {
	case isNumeric(x.t) && isNumeric(t):
		if t == ua.TypeBoolean && !explicit {
			return null, false
		}
		return convertNumber(x, t)
	case x.t == ua.TypeString:
		return parseString(x.s, t)
	case t == ua.TypeString:
		return formatString(x, explicit)
	}
	switch t {
	case ua.TypeExpandedNodeID:
		if x.t == ua.TypeNodeID {
			return val{t: t, id: x.id}, true
		}
	case ua.TypeNodeID:
		if x.t == ua.TypeExpandedNodeID && explicit && x.id.NamespaceURI == "" && x.id.ServerIndex == 0 {
			return val{t: t, id: ua.ExpandedNodeID{NodeID: x.id.NodeID}}, true
		}
	case ua.TypeLocalizedText:
		if x.t == ua.TypeQualifiedName {
			return val{t: t, s: x.s}, true
		}
	}
	return null, false
}

// convertNumber converts between the numeric types: a float to an
// integer rounds to the nearest (halves away from zero); anything out of
// the target's range fails.
func convertNumber(x val, t ua.TypeID) (val, bool) {
	var f float64
	var i int64
	var u uint64
	neg, isFloat := false, false
	switch {
	case x.t == ua.TypeFloat || x.t == ua.TypeDouble:
		f, isFloat = math.Float64frombits(x.n), true
		if math.IsNaN(f) && (t == ua.TypeFloat || t == ua.TypeDouble) {
			return val{t: t, n: x.n}, true
		}
	case isSigned(x.t):
		i = int64(x.n)
		neg = i < 0
	default: // unsigned, StatusCode, Boolean
		u = x.n
	}
	switch {
	case t == ua.TypeDouble || t == ua.TypeFloat:
		switch {
		case isFloat:
		case neg || isSigned(x.t):
			f = float64(i)
		default:
			f = float64(u)
		}
		if t == ua.TypeFloat && !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
			return null, false
		}
		if t == ua.TypeFloat {
			f = float64(float32(f))
		}
		return val{t: t, n: math.Float64bits(f)}, true
	case t == ua.TypeBoolean:
		switch {
		case isFloat:
			return boolVal(f != 0), !math.IsNaN(f)
		case neg:
			return boolVal(true), true
		default:
			return boolVal(x.n != 0), true
		}
	}
	lo, hi := intRange(t)
	if isFloat {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return null, false
		}
		r := math.Round(f)
		switch {
		case r < 0:
			if r < float64(lo) {
				return null, false
			}
			i, neg = int64(r), true
		case r >= 1<<64:
			return null, false
		default:
			u = uint64(r)
		}
	} else if !neg && isSigned(x.t) {
		u = uint64(i)
	}
	if neg {
		if i < lo {
			return null, false
		}
		return val{t: t, n: uint64(i)}, true
	}
	if u > hi {
		return null, false
	}
	return val{t: t, n: u}, true
}

// parseString converts a String to t.
func parseString(s string, t ua.TypeID) (val, bool) {
	switch {
	case t == ua.TypeBoolean:
		switch strings.ToLower(s) {
		case "true", "1":
			return boolVal(true), true
		case "false", "0":
			return boolVal(false), true
		}
		return null, false
	case isInteger(t) || t == ua.TypeStatusCode:
		if isSigned(t) {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return null, false
			}
			return convertNumber(val{t: ua.TypeInt64, n: uint64(n)}, t)
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return null, false
		}
		return convertNumber(val{t: ua.TypeUInt64, n: n}, t)
	case t == ua.TypeFloat || t == ua.TypeDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return null, false
		}
		return convertNumber(val{t: ua.TypeDouble, n: math.Float64bits(f)}, t)
	case t == ua.TypeNodeID:
		n, err := ua.ParseNodeID(s)
		if err != nil {
			return null, false
		}
		return val{t: t, id: ua.ExpandedNodeID{NodeID: n}}, true
	case t == ua.TypeExpandedNodeID:
		n, err := ua.ParseNodeID(s)
		if err != nil {
			return null, false
		}
		return val{t: t, id: ua.ExpandedNodeID{NodeID: n}}, true
	case t == ua.TypeLocalizedText:
		return val{t: t, s: s}, true
	case t == ua.TypeQualifiedName:
		ns, name := uint16(0), s
		if a, b, ok := strings.Cut(s, ":"); ok {
			if n, err := strconv.ParseUint(a, 10, 16); err == nil {
				ns, name = uint16(n), b
			}
		}
		return val{t: t, q: ns, s: name}, true
	case t == ua.TypeGUID:
		g, ok := parseGUID(s)
		return val{t: t, g: g}, ok
	}
	return null, false
}

// formatString converts x to a String: implicitly the identifiers and
// names (NodeId, ExpandedNodeId, LocalizedText, QualifiedName, Guid);
// explicitly numbers, Booleans and DateTimes too.
func formatString(x val, explicit bool) (val, bool) {
	switch x.t {
	case ua.TypeNodeID:
		return val{t: ua.TypeString, s: x.id.NodeID.String()}, true
	case ua.TypeExpandedNodeID:
		s := x.id.NodeID.String()
		if x.id.NamespaceURI != "" {
			s = "nsu=" + x.id.NamespaceURI + ";" + s
		}
		return val{t: ua.TypeString, s: s}, true
	case ua.TypeLocalizedText:
		return val{t: ua.TypeString, s: x.s}, true
	case ua.TypeQualifiedName:
		if x.q != 0 {
			return val{t: ua.TypeString, s: strconv.Itoa(int(x.q)) + ":" + x.s}, true
		}
		return val{t: ua.TypeString, s: x.s}, true
	case ua.TypeGUID:
		return val{t: ua.TypeString, s: formatGUID(x.g)}, true
	}
	if !explicit {
		return null, false
	}
	switch {
	case x.t == ua.TypeBoolean:
		return val{t: ua.TypeString, s: strconv.FormatBool(x.n != 0)}, true
	case isSigned(x.t):
		return val{t: ua.TypeString, s: strconv.FormatInt(int64(x.n), 10)}, true
	case isInteger(x.t), x.t == ua.TypeStatusCode:
		return val{t: ua.TypeString, s: strconv.FormatUint(x.n, 10)}, true
	case x.t == ua.TypeFloat:
		return val{t: ua.TypeString, s: strconv.FormatFloat(math.Float64frombits(x.n), 'g', -1, 32)}, true
	case x.t == ua.TypeDouble:
		return val{t: ua.TypeString, s: strconv.FormatFloat(math.Float64frombits(x.n), 'g', -1, 64)}, true
	case x.t == ua.TypeDateTime:
		return val{t: ua.TypeString, s: ua.TimeFromTicks(int64(x.n)).UTC().Format(time.RFC3339Nano)}, true
	}
	return null, false
}

func parseGUID(s string) (ua.GUID, bool) {
	var g ua.GUID
	s = strings.Trim(s, "{}")
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return g, false
	}
	hex := strings.ReplaceAll(s, "-", "")
	b := make([]byte, 16)
	for i := range 16 {
		n, err := strconv.ParseUint(hex[2*i:2*i+2], 16, 8)
		if err != nil {
			return g, false
		}
		b[i] = byte(n)
	}
	g.Data1 = uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	g.Data2 = uint16(b[4])<<8 | uint16(b[5])
	g.Data3 = uint16(b[6])<<8 | uint16(b[7])
	copy(g.Data4[:], b[8:])
	return g, true
}

func formatGUID(g ua.GUID) string {
	const digits = "0123456789ABCDEF"
	b := make([]byte, 0, 36)
	put := func(x uint64, n int) {
		for i := n - 1; i >= 0; i-- {
			b = append(b, digits[x>>(4*uint(i))&15])
		}
	}
	put(uint64(g.Data1), 8)
	b = append(b, '-')
	put(uint64(g.Data2), 4)
	b = append(b, '-')
	put(uint64(g.Data3), 4)
	b = append(b, '-')
	for i, c := range g.Data4 {
		if i == 2 {
			b = append(b, '-')
		}
		put(uint64(c), 2)
	}
	return string(b)
}

// common converts a and b to the type of the one of higher precedence;
// false when there is none or the conversion fails.
func common(a, b val) (val, val, bool) {
	if a.t == b.t {
		return a, b, true
	}
	pa, pb := precedence(a.t), precedence(b.t)
	if pa == 0 || pb == 0 {
		return a, b, false
	}
	var ok bool
	if pa < pb {
		b, ok = convert(b, a.t, false)
	} else {
		a, ok = convert(a, b.t, false)
	}
	return a, b, ok
}

// equal reports whether a equals b after the implicit conversion.
func equal(a, b val) bool {
	if a.v != nil || b.v != nil {
		return a.v != nil && b.v != nil && a.v.Equal(*b.v)
	}
	a, b, ok := common(a, b)
	if !ok {
		return false
	}
	switch a.t {
	case ua.TypeFloat, ua.TypeDouble:
		return math.Float64frombits(a.n) == math.Float64frombits(b.n)
	case ua.TypeString, ua.TypeXMLElement:
		return a.s == b.s
	case ua.TypeLocalizedText:
		return a.s == b.s && a.s2 == b.s2
	case ua.TypeQualifiedName:
		return a.q == b.q && a.s == b.s
	case ua.TypeNodeID, ua.TypeExpandedNodeID:
		return a.id == b.id
	case ua.TypeGUID:
		return a.g == b.g
	case ua.TypeByteString:
		return string(a.b) == string(b.b)
	}
	return a.n == b.n
}

// order compares a and b, ordered values (numbers, DateTime) after the
// implicit conversion: -1, 0, 1, and false when they cannot be ordered.
func order(a, b val) (int, bool) {
	if a.v != nil || b.v != nil {
		return 0, false
	}
	a, b, ok := common(a, b)
	if !ok {
		return 0, false
	}
	switch {
	case a.t == ua.TypeFloat || a.t == ua.TypeDouble:
		x, y := math.Float64frombits(a.n), math.Float64frombits(b.n)
		switch {
		case math.IsNaN(x) || math.IsNaN(y):
			return 0, false
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case isSigned(a.t) || a.t == ua.TypeDateTime:
		x, y := int64(a.n), int64(b.n)
		return cmpInt(x < y, x > y), true
	case isInteger(a.t):
		return cmpInt(a.n < b.n, a.n > b.n), true
	}
	return 0, false
}

func cmpInt(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}
