package main

import (
	"strconv"
)

// genStatusCodes writes status/zz_codes.go: a Code constant per row of
// StatusCode.csv and the table of names and descriptions that Code.Error,
// String, Name and Description (status.go) read.
func genStatusCodes(s *schema) ([]byte, error) {
	e := newEmitter("status")
	e.p("")
	e.comment("", "The status codes of OPC 10000-4 §7.39 as listed in StatusCode.csv, with the severity codes Good, Uncertain and Bad. Each comment is the specification's description.")
	e.p("const (")
	for _, r := range s.status {
		name := goName(r.name)
		e.comment("\t", name+": "+r.desc)
		e.p("\t%s Code = %s", name, hexU32(r.code))
	}
	e.p(")")
	e.p("")
	e.p("// codeTable holds the symbolic name and description of every code.")
	e.p("var codeTable = map[Code]codeInfo{")
	for _, r := range s.status {
		e.p("\t%s: {%q, %q},", goName(r.name), r.name, r.desc)
	}
	e.p("}")
	return e.source()
}

// genAttributes writes zz_attributes.go: AttributeID and its constants from
// AttributeIds.csv.
func genAttributes(s *schema) ([]byte, error) {
	e := newEmitter("ua", "strconv")
	e.p("")
	e.comment("", "AttributeID identifies an attribute of a node (OPC 10000-3 §5.9, OPC 10000-6 §A.1), as in ReadValueId.AttributeId. The constants are those of AttributeIds.csv.")
	e.p("type AttributeID uint32")
	e.p("")
	e.p("// The attributes of OPC 10000-3.")
	e.p("const (")
	for _, a := range s.attrs {
		e.p("\tAttributeID%s AttributeID = %d", goName(a.name), a.id)
	}
	e.p(")")
	e.p("")
	e.comment("", `String returns the attribute's name as the specification spells it ("NodeId", "Value"), or AttributeID(n) for an unknown id.`)
	e.p("func (a AttributeID) String() string {")
	e.p("\tswitch a {")
	for _, a := range s.attrs {
		e.p("\tcase AttributeID%s:", goName(a.name))
		e.p("\t\treturn %q", a.name)
	}
	e.p("\t}")
	e.p(`	return "AttributeID(" + strconv.FormatUint(uint64(a), 10) + ")"`)
	e.p("}")
	return e.source()
}

// genEnums writes zz_enums.go: each EnumeratedType of the bsd as a Go type
// of its width with constants, String, Encode and Decode.
func genEnums(s *schema) ([]byte, error) {
	e := newEmitter("ua", "strconv")
	e.p("")
	skipped := "Not generated: "
	for i, name := range sortedKeys(skippedEnums) {
		if i > 0 {
			skipped += "; "
		}
		skipped += name + ", " + skippedEnums[name]
	}
	e.comment("", "The enumerated DataTypes of Opc.Ua.Types.bsd. An enumeration is an Int32 on the wire; an option set (IsOptionSet) is an unsigned integer of its LengthInBits whose values are bits. A decoded value the schema does not name is kept as it is.\n\n"+skipped+".")
	for _, en := range s.enums {
		e.p("")
		if en.optionSet {
			e.comment("", en.goName+" is the option set "+en.name+", encoded as an unsigned integer of "+strconv.Itoa(en.bits)+" bits whose constants are bits to combine.")
		} else {
			e.comment("", en.goName+" is the enumeration "+en.name+", encoded as an Int32.")
		}
		e.p("type %s %s", en.goName, en.goBase)
		if len(en.values) > 0 {
			e.p("")
			e.p("// Values of %s.", en.goName)
			e.p("const (")
			for _, v := range en.values {
				e.p("\t%s %s = %d", v.goName, en.goName, v.value)
			}
			e.p(")")
		}
		e.p("")
		if en.optionSet {
			zero := "0"
			var opts []enumValue
			for _, v := range en.values {
				if v.value == 0 {
					zero = v.name
				} else {
					opts = append(opts, v)
				}
			}
			table := lowerFirst(en.goName) + "Options"
			e.comment("", `String returns the names of the bits set in v joined by "|", with any bits the schema does not name in hexadecimal, or "`+zero+`" for no bits.`)
			e.p("func (v %s) String() string { return formatOptions(uint64(v), %q, %s[:]) }", en.goName, zero, table)
			e.p("")
			e.p("var %s = [...]optionName{", table)
			for _, v := range opts {
				e.p("\t{%d, %q},", v.value, v.name)
			}
			e.p("}")
		} else {
			e.comment("", "String returns the name of v as the schema spells it, or "+en.goName+"(n) for a value it does not name.")
			e.p("func (v %s) String() string {", en.goName)
			if len(en.values) > 0 {
				e.p("\tswitch v {")
				for _, v := range en.values {
					e.p("\tcase %s:", v.goName)
					e.p("\t\treturn %q", v.name)
				}
				e.p("\t}")
			}
			e.p(`	return "%s(" + strconv.FormatInt(int64(v), 10) + ")"`, en.goName)
			e.p("}")
		}
		e.p("")
		e.p("// Encode appends the UA Binary encoding of v to b.")
		e.p("func (v %s) Encode(b []byte) []byte { return Append%s(b, %s(v)) }", en.goName, en.prim, en.goBase)
		e.p("")
		e.p("// Decode reads v from d.")
		e.p("func (v *%s) Decode(d *Decoder) { *v = %s(d.Read%s()) }", en.goName, en.goName, en.prim)
	}
	e.p("")
	e.p("// optionName names one bit of an option set.")
	e.p("type optionName struct {")
	e.p("\tbit  uint64")
	e.p("\tname string")
	e.p("}")
	e.p("")
	e.p("// formatOptions formats the option set v for String.")
	e.p("func formatOptions(v uint64, zero string, opts []optionName) string {")
	e.p("\tif v == 0 {")
	e.p("\t\treturn zero")
	e.p("\t}")
	e.p("\tvar s string")
	e.p("\tfor _, o := range opts {")
	e.p("\t\tif v&o.bit != 0 {")
	e.p(`			s += "|" + o.name`)
	e.p("\t\t\tv &^= o.bit")
	e.p("\t\t}")
	e.p("\t}")
	e.p("\tif v != 0 {")
	e.p(`		s += "|0x" + strconv.FormatUint(v, 16)`)
	e.p("\t}")
	e.p("\treturn s[1:]")
	e.p("}")
	return e.source()
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	b := []byte(s)
	if 'A' <= b[0] && b[0] <= 'Z' {
		b[0] += 'a' - 'A'
	}
	return string(b)
}
