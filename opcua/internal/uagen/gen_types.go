package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

const idImport = "github.com/edged/edged/opcua/ua/id"

// genTypes writes zz_types.go: each StructuredType of the bsd that is not a
// built-in as a Go struct with Encode, Decode and BinaryEncodingID, and the
// registration of every structure with RegisterBody.
func genTypes(s *schema) ([]byte, error) {
	imports := []string{idImport}
	if usesKind(s.structs, kindDateTime) {
		imports = append([]string{"time"}, imports...)
	}
	e := newEmitter("ua", imports...)
	e.p("")
	e.comment("", "The structured DataTypes and service messages of Opc.Ua.Types.bsd. Fields are in schema order, inherited fields first; a LengthField array is a slice (nil is the null array). Encode appends the UA Binary encoding; Decode reads into the value, reusing its slices and strings (see the package documentation), and leaves d.Err() set on failure.")
	for _, st := range s.structs {
		e.p("")
		doc := st.goName + " is the structured DataType " + st.name + "."
		if st.base != "" {
			doc += fmt.Sprintf(" It is derived from %s", goName(st.base))
			if st.inherited > 0 {
				doc += fmt.Sprintf(", whose %d fields come first", st.inherited)
			}
			doc += "."
		}
		e.comment("", doc)
		if len(st.fields) == 0 {
			e.p("type %s struct{}", st.goName)
		} else {
			e.p("type %s struct {", st.goName)
			for _, f := range st.fields {
				typ := f.typ.goType
				if f.array {
					typ = "[]" + typ
				}
				e.p("\t%s %s", f.goName, typ)
			}
			e.p("}")
		}

		if st.encodingID != "" {
			e.p("")
			e.comment("", fmt.Sprintf("BinaryEncodingID returns the NodeId of %s (i=%d).", st.encodingID, s.nodeIDByName[st.encodingID]))
			e.p("func (*%s) BinaryEncodingID() NodeID { return NodeID{Numeric: id.%s} }", st.goName, st.encodingID)
		}

		if h := serviceHeader(st); h != "" {
			e.p("")
			e.comment("", fmt.Sprintf("Header returns m's %s, so that generic code reaches the header of any service message.", h))
			e.p("func (m *%s) Header() *%s { return &m.%s }", st.goName, h, h)
		}

		e.p("")
		if len(st.fields) == 0 {
			e.p("// Encode returns b: %s has no fields to encode.", st.goName)
			e.p("func (*%s) Encode(b []byte) []byte { return b }", st.goName)
			e.p("")
			e.p("// Decode reads nothing: %s has no fields.", st.goName)
			e.p("func (*%s) Decode(*Decoder) {}", st.goName)
			continue
		}
		e.p("// Encode appends the UA Binary encoding of m to b.")
		genEncode(e, st)
		e.p("")
		e.comment("", "Decode reads m from d, reusing m's slices and strings. On error d.Err() is set and m is partly overwritten.")
		genDecode(e, st)
	}
	e.p("")
	e.comment("", "generatedBodies lists every generated structure with the NodeId of its DefaultBinary encoding, so that an ExtensionObject carrying one decodes into it.")
	e.p("var generatedBodies = [...]struct {")
	e.p("\tid  uint32")
	e.p("\tnew func() Body")
	e.p("}{")
	for _, st := range s.structs {
		if st.encodingID != "" {
			e.p("\t{id.%s, func() Body { return new(%s) }},", st.encodingID, st.goName)
		}
	}
	e.p("}")
	e.p("")
	e.p("func init() {")
	e.p("\tfor _, b := range generatedBodies {")
	e.p("\t\tRegisterBody(NodeID{Numeric: b.id}, b.new)")
	e.p("\t}")
	e.p("}")
	return e.source()
}

// serviceHeader returns "RequestHeader" or "ResponseHeader" when st is a
// service message, whose first field is that header, and "" otherwise.
func serviceHeader(st *structType) string {
	if len(st.fields) == 0 || st.fields[0].array {
		return ""
	}
	f := st.fields[0]
	if (f.goName == "RequestHeader" || f.goName == "ResponseHeader") && f.typ.goType == f.goName {
		return f.goName
	}
	return ""
}

// genEncode writes the Encode method of st.
func genEncode(e *emitter, st *structType) {
	e.p("func (m *%s) Encode(b []byte) []byte {", st.goName)
	for _, f := range st.fields {
		x := "m." + f.goName
		if !f.array {
			e.p("\t%s", encodeStmt(f.typ, x))
			continue
		}
		e.p("\tb = AppendArrayLen(b, len(%s), %s == nil)", x, x)
		e.p("\tfor i := range %s {", x)
		e.p("\t\t%s", encodeStmt(f.typ, x+"[i]"))
		e.p("\t}")
	}
	e.p("\treturn b")
	e.p("}")
}

// genDecode writes the Decode method of st. An array's length is checked
// against the input with the least size of one element before the slice
// is grown (a null array decodes as nil, an empty one as an empty
// slice), and the element loop stops at the first error.
func genDecode(e *emitter, st *structType) {
	e.p("func (m *%s) Decode(d *Decoder) {", st.goName)
	for _, f := range st.fields {
		x := "m." + f.goName
		if !f.array {
			e.p("\t%s", decodeStmt(f.typ, x))
			continue
		}
		e.p("\t%s = ReadArray(d, %s, %d)", x, x, f.typ.minSize)
		e.p("\tfor i := range %s {", x)
		e.p("\t\tif d.Err() != nil {")
		e.p("\t\t\treturn")
		e.p("\t\t}")
		e.p("\t\t%s", decodeStmt(f.typ, x+"[i]"))
		e.p("\t}")
	}
	e.p("}")
}

// encodeStmt returns the statement appending the element x of type t to b.
func encodeStmt(t *fieldType, x string) string {
	switch t.kind {
	case kindPrim:
		return fmt.Sprintf("b = Append%s(b, %s)", t.prim, x)
	case kindString:
		return fmt.Sprintf("b = AppendString(b, %s)", x)
	case kindXML:
		return fmt.Sprintf("b = AppendString(b, string(%s))", x)
	case kindByteString:
		return fmt.Sprintf("b = AppendByteString(b, %s)", x)
	case kindDateTime:
		return fmt.Sprintf("b = AppendDateTime(b, %s)", x)
	case kindStatus:
		return fmt.Sprintf("b = AppendUint32(b, uint32(%s))", x)
	case kindGUID, kindBuiltin, kindEnum, kindStruct:
		return fmt.Sprintf("b = %s.Encode(b)", x)
	}
	panic(fmt.Sprintf("uagen: no encoder for kind %d", t.kind))
}

// decodeStmt returns the statement decoding into the addressable x of type t.
func decodeStmt(t *fieldType, x string) string {
	switch t.kind {
	case kindPrim:
		return fmt.Sprintf("%s = d.Read%s()", x, t.prim)
	case kindString:
		return fmt.Sprintf("%s = d.ReadStringReuse(%s)", x, x)
	case kindXML:
		return fmt.Sprintf("%s = XMLElement(d.ReadStringReuse(string(%s)))", x, x)
	case kindByteString:
		return fmt.Sprintf("%s = d.ReadByteString(%s)", x, x)
	case kindDateTime:
		return fmt.Sprintf("%s = d.ReadDateTime()", x)
	case kindStatus:
		return fmt.Sprintf("%s = StatusCode(d.ReadUint32())", x)
	case kindGUID, kindBuiltin, kindEnum, kindStruct:
		return fmt.Sprintf("%s.Decode(d)", x)
	}
	panic(fmt.Sprintf("uagen: no decoder for kind %d", t.kind))
}

// genTypesTest writes zz_types_test.go: for every generated structure a
// fill function that sets every field to a non-zero value, and a round-trip
// test through testRoundTrip (roundtrip_test.go). Built-in fields are filled
// by the hand-written sample helpers of sample_test.go.
func genTypesTest(s *schema) ([]byte, error) {
	if err := checkNoRecursion(s.structs); err != nil {
		return nil, err
	}
	imports := []string{"testing"}
	if usesKind(s.structs, kindString) || usesKind(s.structs, kindXML) {
		imports = append([]string{"strconv"}, imports...)
	}
	if usesArrayOf(s.structs, kindDateTime) { // make([]time.Time, 2)
		imports = append(imports, "time")
	}
	e := newEmitter("ua", imports...)
	e.p("")
	e.comment("", "TestGeneratedRoundTrip encodes a value of every generated structure with every field set, decodes it into a new and into a used value, and decodes every truncated prefix.")
	e.p("func TestGeneratedRoundTrip(t *testing.T) {")
	for _, st := range s.structs {
		e.p("\tt.Run(%q, func(t *testing.T) { testRoundTrip(t, fill%s) })", st.goName, st.goName)
	}
	e.p("}")
	e.p("")
	e.comment("", "TestGeneratedDecodeNoAlloc checks that decoding a message again into the value it was decoded into does not allocate, for the structures made only of primitives, strings, byte strings, enumerations and other such structures.")
	e.p("func TestGeneratedDecodeNoAlloc(t *testing.T) {")
	for _, st := range s.structs {
		if allocFree(st) {
			e.p("\tt.Run(%q, func(t *testing.T) { testDecodeNoAlloc(t, fill%s) })", st.goName, st.goName)
		}
	}
	e.p("}")
	for _, st := range s.structs {
		e.p("")
		if len(st.fields) == 0 {
			e.p("func fill%s(*%s, int) {}", st.goName, st.goName)
			continue
		}
		e.p("func fill%s(v *%s, seed int) {", st.goName, st.goName)
		for k, f := range st.fields {
			x := "v." + f.goName
			seed := "seed+" + strconv.Itoa(k+1)
			if !f.array {
				e.p("\t%s", fillStmt(f, x, seed))
				continue
			}
			e.p("\t%s = make([]%s, 2)", x, f.typ.goType)
			e.p("\tfor i := range %s {", x)
			e.p("\t\t%s", fillStmt(f, x+"[i]", seed+"+i"))
			e.p("\t}")
		}
		e.p("}")
	}
	return e.source()
}

// fillStmt returns the statement setting the element x of field f to a
// non-zero value derived from the int expression seed.
func fillStmt(f *field, x, seed string) string {
	t := f.typ
	switch t.kind {
	case kindPrim:
		switch t.prim {
		case "Bool":
			return x + " = true"
		case "Int8":
			return fmt.Sprintf("%s = int8(1 + (%s)%%100)", x, seed)
		case "Uint8":
			return fmt.Sprintf("%s = uint8(1 + (%s)%%200)", x, seed)
		case "Int16":
			return fmt.Sprintf("%s = int16(1 + (%s)%%30000)", x, seed)
		case "Uint16":
			return fmt.Sprintf("%s = uint16(1 + (%s)%%60000)", x, seed)
		case "Float32", "Float64":
			return fmt.Sprintf("%s = %s(%s) + 0.5", x, t.goType, seed)
		default: // 32- and 64-bit integers
			return fmt.Sprintf("%s = %s(%s)", x, t.goType, seed)
		}
	case kindString:
		return fmt.Sprintf("%s = %q + strconv.Itoa(%s)", x, f.goName+"-", seed)
	case kindXML:
		return fmt.Sprintf("%s = XMLElement(%q + strconv.Itoa(%s) + %q)", x, "<"+f.goName+">", seed, "</"+f.goName+">")
	case kindByteString:
		return fmt.Sprintf("%s = []byte{byte(%s), 0xA5, 0}", x, seed)
	case kindDateTime:
		return fmt.Sprintf("%s = sampleTime(%s)", x, seed)
	case kindStatus:
		return fmt.Sprintf("%s = sampleStatusCode(%s)", x, seed)
	case kindGUID, kindBuiltin:
		return fmt.Sprintf("%s = sample%s(%s)", x, t.goType, seed)
	case kindEnum:
		for _, v := range t.enum.values {
			if v.value != 0 {
				return fmt.Sprintf("%s = %s", x, v.goName)
			}
		}
		return fmt.Sprintf("%s = 0 // %s names no non-zero value", x, t.enum.name)
	case kindStruct:
		return fmt.Sprintf("fill%s(&%s, %s)", t.goType, x, seed)
	}
	panic(fmt.Sprintf("uagen: no fill for kind %d", t.kind))
}

// allocFree reports whether decoding st again into the same value should
// not allocate: it holds no built-in composite (NodeId, Variant, …) whose
// decoder may allocate.
func allocFree(st *structType) bool {
	for _, f := range st.fields {
		switch f.typ.kind {
		case kindBuiltin:
			return false
		case kindStruct:
			if !allocFree(f.typ.strct) {
				return false
			}
		}
	}
	return true
}

// checkNoRecursion makes sure no structure contains itself through a
// slice: a fill function that makes two elements of every slice would
// never end.
func checkNoRecursion(structs []*structType) error {
	var visit func(st *structType, path []string) error
	visit = func(st *structType, path []string) error {
		if slices.Contains(path, st.name) {
			return fmt.Errorf("structure %s contains itself (%s); the test generator cannot fill it", st.name, strings.Join(append(path, st.name), " → "))
		}
		path = append(path, st.name)
		for _, f := range st.fields {
			if f.typ.kind == kindStruct {
				if err := visit(f.typ.strct, path); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, st := range structs {
		if err := visit(st, nil); err != nil {
			return err
		}
	}
	return nil
}

// usesKind reports whether a field of one of structs has type kind k.
func usesKind(structs []*structType, k kind) bool {
	for _, st := range structs {
		for _, f := range st.fields {
			if f.typ.kind == k {
				return true
			}
		}
	}
	return false
}

// usesArrayOf reports whether a field of one of structs is an array of
// elements of kind k.
func usesArrayOf(structs []*structType, k kind) bool {
	for _, st := range structs {
		for _, f := range st.fields {
			if f.array && f.typ.kind == k {
				return true
			}
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
