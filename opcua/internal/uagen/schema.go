package main

import (
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Namespaces of the OPC Binary schema (Opc.Ua.Types.bsd).
const (
	nsBinarySchema = "http://opcfoundation.org/BinarySchema/"
	nsUA           = "http://opcfoundation.org/UA/"
)

// builtinStructs are the StructuredTypes that the bsd declares to describe
// built-in types (OPC 10000-6 §5.2.2). Package ua implements them by hand
// (builtin.go and its codecs), so they are not generated. The bsd gives them
// no BaseType; any other structure without one is an error.
var builtinStructs = map[string]bool{
	"XmlElement":       true,
	"TwoByteNodeId":    true,
	"FourByteNodeId":   true,
	"NumericNodeId":    true,
	"StringNodeId":     true,
	"GuidNodeId":       true,
	"ByteStringNodeId": true,
	"NodeId":           true,
	"ExpandedNodeId":   true,
	"DiagnosticInfo":   true,
	"QualifiedName":    true,
	"LocalizedText":    true,
	"DataValue":        true,
	"ExtensionObject":  true,
	"Variant":          true,
}

// skippedEnums are EnumeratedTypes of the bsd that are not generated, with
// the reason (repeated in the generated file).
var skippedEnums = map[string]string{
	// A 6-bit field inside the NodeId encoding byte, not a value of its own.
	"NodeIdType": "the 6-bit encoding-byte field of the built-in NodeId, encoded by NodeID itself",
	// Same values as ua.IDType (builtin.go), whose name it would take.
	"IdType": "the identifier kinds of a NodeId, declared by hand as IDType (builtin.go)",
}

// kind says how a field type is encoded.
type kind int

const (
	kindPrim       kind = iota // Boolean, integers, floats: Append<P>/Read<P>
	kindString                 // String, CharArray
	kindXML                    // XmlElement: a String
	kindByteString             // ByteString
	kindDateTime               // DateTime
	kindStatus                 // StatusCode: a UInt32
	kindGUID                   // Guid: GUID with Encode/Decode methods
	kindBuiltin                // NodeId … Variant: hand-written types with Encode/Decode methods
	kindEnum                   // generated enumerations and option sets
	kindStruct                 // generated structures
)

// fieldType is the resolved type of one element of a field.
type fieldType struct {
	kind    kind
	goType  string      // Go type of one element
	prim    string      // codec suffix for kindPrim: "Int32" for AppendInt32/ReadInt32
	minSize int         // least number of bytes one element takes on the wire
	enum    *enumType   // kindEnum
	strct   *structType // kindStruct
}

type field struct {
	name   string // as in the bsd
	goName string
	typ    *fieldType
	array  bool // a LengthField array: []T on the Go side
}

type structType struct {
	name       string // as in the bsd
	goName     string
	base       string     // bsd name of the base structure, "" for ExtensionObject
	fields     []*field   // inherited ones first
	inherited  int        // how many of fields come from the base
	raw        []xmlField // the bsd's fields, length fields included
	encodingID string     // NodeIds.csv symbol of the DefaultBinary encoding, "" if none
	minSize    int        // -1 while being computed
}

type enumValue struct {
	name   string // as in the bsd
	goName string // full constant name, <Type><Value>
	value  int64
}

type enumType struct {
	name      string
	goName    string
	bits      int
	optionSet bool
	goBase    string // underlying Go type
	prim      string // codec suffix: Int32, Uint8, Uint16, Uint32
	values    []enumValue
}

type nodeIDRow struct {
	name  string
	id    uint32
	class string
}

type statusRow struct {
	name string
	code uint32
	desc string
}

type attrRow struct {
	name string
	id   uint32
}

// schema is everything the generators need, resolved and checked.
type schema struct {
	structs []*structType // bsd order, generated ones only
	enums   []*enumType   // bsd order, generated ones only
	nodeIDs []nodeIDRow   // NodeIds.csv order
	status  []statusRow
	attrs   []attrRow

	nodeIDByName map[string]uint32

	// notes records the schema oddities met on the way (uagen -v).
	notes []string
}

// The bsd as encoding/xml sees it.
type xmlDict struct {
	Attrs           []xml.Attr  `xml:",any,attr"`
	TargetNamespace string      `xml:"TargetNamespace,attr"`
	Structs         []xmlStruct `xml:"StructuredType"`
	Enums           []xmlEnum   `xml:"EnumeratedType"`
	// OpaqueTypes (Duration, UtcTime, …) are not used: the bsd's fields
	// name the OPC Binary primitive underneath them instead.
}

type xmlStruct struct {
	Name     string     `xml:"Name,attr"`
	BaseType string     `xml:"BaseType,attr"`
	Fields   []xmlField `xml:"Field"`
}

type xmlField struct {
	Name            string `xml:"Name,attr"`
	TypeName        string `xml:"TypeName,attr"`
	LengthField     string `xml:"LengthField,attr"`
	Length          string `xml:"Length,attr"`
	SwitchField     string `xml:"SwitchField,attr"`
	SwitchValue     string `xml:"SwitchValue,attr"`
	SourceType      string `xml:"SourceType,attr"`
	IsLengthInBytes string `xml:"IsLengthInBytes,attr"`
	Terminator      string `xml:"Terminator,attr"`
}

type xmlEnum struct {
	Name         string `xml:"Name,attr"`
	LengthInBits int    `xml:"LengthInBits,attr"`
	IsOptionSet  bool   `xml:"IsOptionSet,attr"`
	Values       []struct {
		Name  string `xml:"Name,attr"`
		Value int64  `xml:"Value,attr"`
	} `xml:"EnumeratedValue"`
}

func loadSchema(dir string) (*schema, error) {
	s := &schema{}
	var err error
	if s.nodeIDs, err = readNodeIDs(filepath.Join(dir, "NodeIds.csv")); err != nil {
		return nil, err
	}
	s.nodeIDByName = make(map[string]uint32, len(s.nodeIDs))
	for _, r := range s.nodeIDs {
		s.nodeIDByName[r.name] = r.id
	}
	if s.status, err = readStatusCodes(filepath.Join(dir, "StatusCode.csv")); err != nil {
		return nil, err
	}
	if s.attrs, err = readAttributes(filepath.Join(dir, "AttributeIds.csv")); err != nil {
		return nil, err
	}
	if err := s.readBSD(filepath.Join(dir, "Opc.Ua.Types.bsd")); err != nil {
		return nil, err
	}
	return s, nil
}

func readCSV(path string, fields int) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = fields
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return recs, nil
}

func readNodeIDs(path string) ([]nodeIDRow, error) {
	recs, err := readCSV(path, 3)
	if err != nil {
		return nil, err
	}
	seenName := map[string]bool{}
	seenID := map[uint32]string{}
	rows := make([]nodeIDRow, 0, len(recs))
	for i, rec := range recs {
		id, err := strconv.ParseUint(rec[1], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("NodeIds.csv line %d: %w", i+1, err)
		}
		name := rec[0]
		if !isExportedIdent(name) {
			return nil, fmt.Errorf("NodeIds.csv line %d: %q is not an exported Go identifier", i+1, name)
		}
		if seenName[name] {
			return nil, fmt.Errorf("NodeIds.csv line %d: duplicate name %s", i+1, name)
		}
		if other, ok := seenID[uint32(id)]; ok {
			return nil, fmt.Errorf("NodeIds.csv line %d: id %d of %s is also %s", i+1, id, name, other)
		}
		seenName[name], seenID[uint32(id)] = true, name
		rows = append(rows, nodeIDRow{name, uint32(id), rec[2]})
	}
	return rows, nil
}

func readStatusCodes(path string) ([]statusRow, error) {
	recs, err := readCSV(path, 3)
	if err != nil {
		return nil, err
	}
	seen := map[uint32]string{}
	rows := make([]statusRow, 0, len(recs))
	for i, rec := range recs {
		code, err := strconv.ParseUint(rec[1], 0, 32)
		if err != nil {
			return nil, fmt.Errorf("StatusCode.csv line %d: %w", i+1, err)
		}
		if !isExportedIdent(rec[0]) {
			return nil, fmt.Errorf("StatusCode.csv line %d: bad name %q", i+1, rec[0])
		}
		if code&0xFFFF != 0 {
			return nil, fmt.Errorf("StatusCode.csv line %d: %s has info bits set", i+1, rec[0])
		}
		if other, ok := seen[uint32(code)]; ok {
			return nil, fmt.Errorf("StatusCode.csv line %d: code of %s is also %s", i+1, rec[0], other)
		}
		seen[uint32(code)] = rec[0]
		rows = append(rows, statusRow{rec[0], uint32(code), strings.TrimSpace(rec[2])})
	}
	return rows, nil
}

func readAttributes(path string) ([]attrRow, error) {
	recs, err := readCSV(path, 2)
	if err != nil {
		return nil, err
	}
	rows := make([]attrRow, 0, len(recs))
	for i, rec := range recs {
		id, err := strconv.ParseUint(rec[1], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("AttributeIds.csv line %d: %w", i+1, err)
		}
		if !isExportedIdent(rec[0]) {
			return nil, fmt.Errorf("AttributeIds.csv line %d: bad name %q", i+1, rec[0])
		}
		rows = append(rows, attrRow{rec[0], uint32(id)})
	}
	return rows, nil
}

// qname is a resolved TypeName: its namespace URI and local name.
type qname struct{ ns, local string }

func (s *schema) readBSD(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var dict xmlDict
	if err := xml.Unmarshal(data, &dict); err != nil {
		return fmt.Errorf("Opc.Ua.Types.bsd: %w", err)
	}
	if dict.TargetNamespace != nsUA {
		return fmt.Errorf("Opc.Ua.Types.bsd: TargetNamespace %q, want %q", dict.TargetNamespace, nsUA)
	}
	prefixes := map[string]string{}
	for _, a := range dict.Attrs {
		if a.Name.Space == "xmlns" {
			prefixes[a.Name.Local] = a.Value
		}
	}
	resolve := func(qualified string) (qname, error) {
		prefix, local, ok := strings.Cut(qualified, ":")
		if !ok {
			return qname{}, fmt.Errorf("type name %q has no namespace prefix", qualified)
		}
		ns, ok := prefixes[prefix]
		if !ok {
			return qname{}, fmt.Errorf("type name %q: unknown prefix", qualified)
		}
		return qname{ns, local}, nil
	}

	// Enumerations first: structures refer to them.
	enumByName := map[string]*enumType{}
	for _, xe := range dict.Enums {
		if why, skip := skippedEnums[xe.Name]; skip {
			s.notes = append(s.notes, fmt.Sprintf("enumeration %s not generated: %s", xe.Name, why))
			continue
		}
		if len(xe.Values) == 0 {
			s.notes = append(s.notes, fmt.Sprintf("enumeration %s has no values", xe.Name))
		}
		e, err := newEnum(xe)
		if err != nil {
			return fmt.Errorf("enumeration %s: %w", xe.Name, err)
		}
		enumByName[e.name] = e
		s.enums = append(s.enums, e)
	}

	xmlStructs := map[string]*xmlStruct{}
	structByName := map[string]*structType{}
	for i := range dict.Structs {
		xs := &dict.Structs[i]
		if builtinStructs[xs.Name] {
			if xs.BaseType != "" {
				return fmt.Errorf("structure %s: listed as built-in but has BaseType %s", xs.Name, xs.BaseType)
			}
			continue
		}
		if xs.BaseType == "" {
			return fmt.Errorf("structure %s: no BaseType, and not a known built-in", xs.Name)
		}
		if _, dup := xmlStructs[xs.Name]; dup {
			return fmt.Errorf("structure %s declared twice", xs.Name)
		}
		xmlStructs[xs.Name] = xs
		st := &structType{name: xs.Name, goName: goName(xs.Name), minSize: -1}
		if id := xs.Name + "_Encoding_DefaultBinary"; s.nodeIDByName[id] != 0 {
			st.encodingID = id
		}
		structByName[xs.Name] = st
		s.structs = append(s.structs, st)
	}

	typeOf := func(q qname) (*fieldType, error) {
		switch q.ns {
		case nsBinarySchema:
			if t, ok := opcTypes[q.local]; ok {
				t := t
				return &t, nil
			}
		case nsUA:
			if t, ok := uaBuiltinTypes[q.local]; ok {
				t := t
				return &t, nil
			}
			if e, ok := enumByName[q.local]; ok {
				return &fieldType{kind: kindEnum, goType: e.goName, enum: e, minSize: e.bits / 8}, nil
			}
			if st, ok := structByName[q.local]; ok {
				return &fieldType{kind: kindStruct, goType: st.goName, strct: st}, nil
			}
		}
		return nil, fmt.Errorf("unsupported field type {%s}%s", q.ns, q.local)
	}

	// Resolve fields, with inheritance, in bsd order of the structures;
	// a base may come after its derived type in the file.
	done := map[string]bool{}
	var resolveStruct func(st *structType, seen map[string]bool) error
	resolveStruct = func(st *structType, seen map[string]bool) error {
		if done[st.name] {
			return nil
		}
		if seen[st.name] {
			return fmt.Errorf("structure %s inherits from itself", st.name)
		}
		seen[st.name] = true
		xs := xmlStructs[st.name]
		base, err := resolve(xs.BaseType)
		if err != nil {
			return fmt.Errorf("structure %s: %w", st.name, err)
		}
		var inherited []*field
		var inheritedRaw []xmlField
		switch {
		case base.ns == nsUA && base.local == "ExtensionObject":
		case base.ns == nsUA && structByName[base.local] != nil:
			b := structByName[base.local]
			if err := resolveStruct(b, seen); err != nil {
				return err
			}
			st.base = b.name
			inherited, inheritedRaw = b.fields, b.raw
		default:
			return fmt.Errorf("structure %s: unsupported BaseType %s", st.name, xs.BaseType)
		}

		// The bsd repeats the inherited fields, marked with SourceType,
		// before the type's own fields. Check the repetition against the
		// base and take the base's resolved fields for it.
		if len(xs.Fields) < len(inheritedRaw) {
			return fmt.Errorf("structure %s: lists %d fields, fewer than the %d of its base %s", st.name, len(xs.Fields), len(inheritedRaw), st.base)
		}
		// Some structures repeat them without SourceType
		// (UABinaryFileDataType); name, type and length field must match.
		missingSource := false
		for i, bf := range inheritedRaw {
			xf := xs.Fields[i]
			if xf.Name != bf.Name || xf.TypeName != bf.TypeName || xf.LengthField != bf.LengthField {
				return fmt.Errorf("structure %s: field %d is %s %s, want %s %s inherited from %s", st.name, i, xf.Name, xf.TypeName, bf.Name, bf.TypeName, st.base)
			}
			if xf.SourceType == "" {
				missingSource = true
			}
		}
		if missingSource {
			s.notes = append(s.notes, fmt.Sprintf("%s repeats fields inherited from %s without SourceType", st.name, st.base))
		}
		fields := append([]*field(nil), inherited...)
		raw := append([]xmlField(nil), inheritedRaw...)
		for _, xf := range xs.Fields[len(inheritedRaw):] {
			raw = append(raw, xf)
			if xf.SwitchField != "" || xf.SwitchValue != "" || xf.Length != "" || xf.Terminator != "" || xf.IsLengthInBytes != "" {
				return fmt.Errorf("structure %s field %s: optional fields, unions and fixed-length fields are not supported", st.name, xf.Name)
			}
			if xf.SourceType != "" {
				return fmt.Errorf("structure %s: field %s has SourceType %s but the base does not declare it", st.name, xf.Name, xf.SourceType)
			}
			q, err := resolve(xf.TypeName)
			if err != nil {
				return fmt.Errorf("structure %s field %s: %w", st.name, xf.Name, err)
			}
			t, err := typeOf(q)
			if err != nil {
				return fmt.Errorf("structure %s field %s: %w", st.name, xf.Name, err)
			}
			f := &field{name: xf.Name, goName: goName(xf.Name), typ: t}
			if strings.Contains(xf.Name, "_") {
				s.notes = append(s.notes, fmt.Sprintf("%s.%s has an underscore; Go name %s", st.name, xf.Name, f.goName))
			}
			if xf.LengthField != "" {
				// UA Binary encodes an array as its Int32 length and the
				// elements, so the length field must come right before it.
				n := len(fields) - 1
				if n < len(inherited) || fields[n].name != xf.LengthField || fields[n].array ||
					fields[n].typ.kind != kindPrim || fields[n].typ.prim != "Int32" {
					return fmt.Errorf("structure %s field %s: LengthField %s is not the Int32 field right before it", st.name, xf.Name, xf.LengthField)
				}
				fields = fields[:n]
				f.array = true
			}
			fields = append(fields, f)
		}
		goNames := map[string]bool{"Encode": true, "Decode": true, "BinaryEncodingID": true}
		for _, f := range fields {
			if goNames[f.goName] {
				return fmt.Errorf("structure %s: Go field name %s is taken", st.name, f.goName)
			}
			goNames[f.goName] = true
		}
		st.fields, st.raw, st.inherited = fields, raw, len(inherited)
		if len(fields) == 0 {
			s.notes = append(s.notes, fmt.Sprintf("structure %s has no fields", st.name))
		}
		done[st.name] = true
		return nil
	}
	for _, st := range s.structs {
		if err := resolveStruct(st, map[string]bool{}); err != nil {
			return err
		}
	}
	if err := computeSizes(s.structs); err != nil {
		return err
	}

	// Go names must not collide across the generated declarations.
	names := map[string]string{}
	claim := func(n, what string) error {
		if other, ok := names[n]; ok {
			return fmt.Errorf("Go name %s of %s is also %s", n, what, other)
		}
		names[n] = what
		return nil
	}
	for _, r := range s.status {
		if err := claim("Status"+goName(r.name), "status code "+r.name); err != nil {
			return err
		}
	}
	for _, e := range s.enums {
		if err := claim(e.goName, "enumeration "+e.name); err != nil {
			return err
		}
		for _, v := range e.values {
			if err := claim(v.goName, "value "+e.name+"."+v.name); err != nil {
				return err
			}
		}
	}
	for _, st := range s.structs {
		if err := claim(st.goName, "structure "+st.name); err != nil {
			return err
		}
	}
	return nil
}

// opcTypes maps the OPC Binary primitives used by the bsd.
var opcTypes = map[string]fieldType{
	"Boolean":    {kind: kindPrim, goType: "bool", prim: "Bool", minSize: 1},
	"SByte":      {kind: kindPrim, goType: "int8", prim: "Int8", minSize: 1},
	"Byte":       {kind: kindPrim, goType: "uint8", prim: "Uint8", minSize: 1},
	"Int16":      {kind: kindPrim, goType: "int16", prim: "Int16", minSize: 2},
	"UInt16":     {kind: kindPrim, goType: "uint16", prim: "Uint16", minSize: 2},
	"Int32":      {kind: kindPrim, goType: "int32", prim: "Int32", minSize: 4},
	"UInt32":     {kind: kindPrim, goType: "uint32", prim: "Uint32", minSize: 4},
	"Int64":      {kind: kindPrim, goType: "int64", prim: "Int64", minSize: 8},
	"UInt64":     {kind: kindPrim, goType: "uint64", prim: "Uint64", minSize: 8},
	"Float":      {kind: kindPrim, goType: "float32", prim: "Float32", minSize: 4},
	"Double":     {kind: kindPrim, goType: "float64", prim: "Float64", minSize: 8},
	"String":     {kind: kindString, goType: "string", minSize: 4},
	"CharArray":  {kind: kindString, goType: "string", minSize: 4},
	"ByteString": {kind: kindByteString, goType: "[]byte", minSize: 4},
	"DateTime":   {kind: kindDateTime, goType: "time.Time", minSize: 8},
	"Guid":       {kind: kindGUID, goType: "GUID", minSize: 16},
}

// uaBuiltinTypes maps the built-in types the bsd names in the UA namespace
// to their hand-written Go types. minSize is the shortest valid encoding:
// a two-byte NodeId (2), an ExpandedNodeId without URI or server index (2),
// a QualifiedName with a null name (2+4), the encoding mask alone of a
// LocalizedText, Variant, DataValue or DiagnosticInfo (1), and an
// ExtensionObject with a two-byte type id and no body (2+1).
var uaBuiltinTypes = map[string]fieldType{
	"NodeId":          {kind: kindBuiltin, goType: "NodeID", minSize: 2},
	"ExpandedNodeId":  {kind: kindBuiltin, goType: "ExpandedNodeID", minSize: 2},
	"StatusCode":      {kind: kindStatus, goType: "StatusCode", minSize: 4},
	"DiagnosticInfo":  {kind: kindBuiltin, goType: "DiagnosticInfo", minSize: 1},
	"QualifiedName":   {kind: kindBuiltin, goType: "QualifiedName", minSize: 6},
	"LocalizedText":   {kind: kindBuiltin, goType: "LocalizedText", minSize: 1},
	"Variant":         {kind: kindBuiltin, goType: "Variant", minSize: 1},
	"DataValue":       {kind: kindBuiltin, goType: "DataValue", minSize: 1},
	"ExtensionObject": {kind: kindBuiltin, goType: "ExtensionObject", minSize: 3},
	"XmlElement":      {kind: kindXML, goType: "XMLElement", minSize: 4},
}

func newEnum(xe xmlEnum) (*enumType, error) {
	e := &enumType{name: xe.Name, goName: goName(xe.Name), bits: xe.LengthInBits, optionSet: xe.IsOptionSet}
	switch {
	case !e.optionSet && e.bits == 32:
		e.goBase, e.prim = "int32", "Int32"
	case e.optionSet && e.bits == 8:
		e.goBase, e.prim = "uint8", "Uint8"
	case e.optionSet && e.bits == 16:
		e.goBase, e.prim = "uint16", "Uint16"
	case e.optionSet && e.bits == 32:
		e.goBase, e.prim = "uint32", "Uint32"
	default:
		return nil, fmt.Errorf("unsupported LengthInBits %d (option set %v)", e.bits, e.optionSet)
	}
	var lo, hi int64 = -1 << 31, 1<<31 - 1
	if e.optionSet {
		lo, hi = 0, 1<<e.bits-1
	}
	seen := map[string]bool{}
	for _, xv := range xe.Values {
		if !isExportedIdent(xv.Name) {
			return nil, fmt.Errorf("value name %q is not an exported Go identifier", xv.Name)
		}
		if seen[xv.Name] {
			return nil, fmt.Errorf("value %s declared twice", xv.Name)
		}
		seen[xv.Name] = true
		if xv.Value < lo || xv.Value > hi {
			return nil, fmt.Errorf("value %s = %d does not fit %s", xv.Name, xv.Value, e.goBase)
		}
		if e.optionSet && xv.Value&(xv.Value-1) != 0 {
			return nil, fmt.Errorf("option %s = %d is not a single bit", xv.Name, xv.Value)
		}
		e.values = append(e.values, enumValue{xv.Name, e.goName + goName(xv.Name), xv.Value})
	}
	return e, nil
}

// min returns the least number of bytes an encoding of st takes: the sum
// of its fields' minima, 4 for an array (its length).
func (st *structType) min() (int, error) {
	switch {
	case st.minSize >= 0:
		return st.minSize, nil
	case st.minSize == -2:
		return 0, fmt.Errorf("structure %s contains itself by value", st.name)
	}
	st.minSize = -2
	n := 0
	for _, f := range st.fields {
		if f.array {
			n += 4
			continue
		}
		if f.typ.kind == kindStruct {
			m, err := f.typ.strct.min()
			if err != nil {
				return 0, err
			}
			f.typ.minSize = m
		}
		n += f.typ.minSize
	}
	st.minSize = n
	return n, nil
}

// computeSizes computes the minimum encoded size of every structure and
// records it in the fields whose type is a structure.
func computeSizes(structs []*structType) error {
	for _, st := range structs {
		if _, err := st.min(); err != nil {
			return err
		}
		for _, f := range st.fields {
			if f.typ.kind == kindStruct {
				m, err := f.typ.strct.min()
				if err != nil {
					return err
				}
				f.typ.minSize = m
			}
		}
	}
	return nil
}
