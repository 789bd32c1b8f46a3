package main

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxByteString is the largest ByteString default value kept; larger ones
// (the deprecated type dictionaries) are left out.
const maxByteString = 1024

// scalarGoTypes maps the NodeSet's element name of a built-in scalar to the
// Go type that ua.NewVariant takes for it.
var scalarGoTypes = map[string]string{
	"Boolean": "bool",
	"SByte":   "int8",
	"Byte":    "uint8",
	"Int16":   "int16",
	"UInt16":  "uint16",
	"Int32":   "int32",
	"UInt32":  "uint32",
	"Int64":   "int64",
	"UInt64":  "uint64",
	"Float":   "float32",
	"Double":  "float64",
}

// valueExpr returns a Go expression of type ua.Variant for the inner XML
// of a <Value> element, or "" and the reason when the value is not kept.
func valueExpr(inner []byte) (expr, skip string, err error) {
	dec := xml.NewDecoder(bytes.NewReader(inner))
	var root *xml.StartElement
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", fmt.Errorf("value: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			root = &se
			break
		}
	}
	name := root.Name.Local
	if name == "ListOfExtensionObject" {
		if e, ok, err := enumValuesExpr(inner); err != nil || ok {
			return e, "", err
		}
	}
	elem, isList := strings.CutPrefix(name, "ListOf")
	if !isList {
		elem = name
	}
	if !isList {
		e, skip, err := scalarExpr(dec, root, elem)
		if e == "" {
			return "", skip, err
		}
		return "ua.MustVariant(" + e + ")", "", nil
	}
	var elems []string
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", fmt.Errorf("value %s: %w", name, err)
		}
		if _, ok := tok.(xml.EndElement); ok {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if se.Name.Local != elem {
			return "", "", fmt.Errorf("value %s holds a %s", name, se.Name.Local)
		}
		e, skip, err := scalarExpr(dec, &se, elem)
		if e == "" {
			return "", skip, err
		}
		elems = append(elems, e)
	}
	goType, ok := scalarGoTypes[elem]
	switch {
	case ok && elem != "Byte":
	case elem == "String":
		goType = "string"
	case elem == "LocalizedText":
		goType = "ua.LocalizedText"
		for i, e := range elems {
			elems[i] = strings.TrimPrefix(e, "ua.LocalizedText")
		}
	default:
		return "", "array of " + elem, nil
	}
	return "ua.MustVariant([]" + goType + "{" + strings.Join(elems, ", ") + "})", "", nil
}

// scalarExpr reads the element se (of built-in type elem) and returns a
// Go expression of the value that ua.NewVariant takes.
func scalarExpr(dec *xml.Decoder, se *xml.StartElement, elem string) (expr, skip string, err error) {
	if elem == "LocalizedText" {
		var lt struct {
			Locale string `xml:"Locale"`
			Text   string `xml:"Text"`
		}
		if err := dec.DecodeElement(&lt, se); err != nil {
			return "", "", err
		}
		return fmt.Sprintf("ua.LocalizedText{Locale: %q, Text: %q}", lt.Locale, lt.Text), "", nil
	}
	var text string
	if goType, ok := scalarGoTypes[elem]; ok || elem == "String" || elem == "DateTime" || elem == "ByteString" {
		if err := dec.DecodeElement(&text, se); err != nil {
			return "", "", err
		}
		text = strings.TrimSpace(text)
		switch {
		case elem == "String":
			return strconv.Quote(text), "", nil
		case elem == "Boolean":
			b, err := strconv.ParseBool(text)
			return strconv.FormatBool(b), "", err
		case elem == "Float" || elem == "Double":
			f, err := strconv.ParseFloat(text, 64)
			return fmt.Sprintf("%s(%s)", goType, strconv.FormatFloat(f, 'g', -1, 64)), "", err
		case ok:
			if _, err := strconv.ParseInt(text, 10, 64); err != nil {
				if _, err := strconv.ParseUint(text, 10, 64); err != nil {
					return "", "", fmt.Errorf("%s %q: %w", elem, text, err)
				}
			}
			return fmt.Sprintf("%s(%s)", goType, text), "", nil
		case elem == "DateTime":
			t, err := time.Parse(time.RFC3339Nano, text)
			if err != nil {
				return "", "", err
			}
			// A DateTime is 100 ns ticks since 1601-01-01 UTC.
			ticks := (t.Unix()+11644473600)*10_000_000 + int64(t.Nanosecond()/100)
			return fmt.Sprintf("ua.TimeFromTicks(%d)", ticks), "", nil
		default: // ByteString
			b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(text), ""))
			if err != nil {
				return "", "", err
			}
			if len(b) > maxByteString {
				return "", fmt.Sprintf("ByteString of %d bytes", len(b)), nil
			}
			return fmt.Sprintf("[]byte(%q)", b), "", nil
		}
	}
	if err := dec.Skip(); err != nil {
		return "", "", err
	}
	return "", elem, nil
}

// idEnumValueTypeEncodingXML is the TypeId of an EnumValueType body in
// the NodeSet's XML.
const idEnumValueTypeEncodingXML = 7616

// xmlEnumValues is the Value of an EnumValues property in the NodeSet: a
// ListOfExtensionObject whose bodies are EnumValueTypes.
type xmlEnumValues struct {
	Objects []struct {
		TypeID string `xml:"TypeId>Identifier"`
		Body   struct {
			EnumValues []struct {
				Value       int64 `xml:"Value"`
				DisplayName struct {
					Locale string `xml:"Locale"`
					Text   string `xml:"Text"`
				} `xml:"DisplayName"`
				Description struct {
					Locale string `xml:"Locale"`
					Text   string `xml:"Text"`
				} `xml:"Description"`
			} `xml:"EnumValueType"`
			Other []struct {
				XMLName xml.Name
			} `xml:",any"`
		} `xml:"Body"`
	} `xml:"ExtensionObject"`
}

// enumValuesExpr returns a Go expression of type ua.Variant for a
// ListOfExtensionObject of EnumValueTypes (the EnumValues of a DataType),
// or ok false when the list holds anything else.
func enumValuesExpr(inner []byte) (expr string, ok bool, err error) {
	var v xmlEnumValues
	if err := xml.NewDecoder(bytes.NewReader(inner)).Decode(&v); err != nil {
		return "", false, fmt.Errorf("ListOfExtensionObject: %w", err)
	}
	if len(v.Objects) == 0 {
		return "", false, nil
	}
	var elems []string
	for _, o := range v.Objects {
		tid, err := numericID(o.TypeID, nil)
		if err != nil || tid != idEnumValueTypeEncodingXML || len(o.Body.EnumValues) != 1 || len(o.Body.Other) != 0 {
			return "", false, nil
		}
		e := o.Body.EnumValues[0]
		elems = append(elems, fmt.Sprintf("{Body: &ua.EnumValueType{Value: %d, DisplayName: ua.LocalizedText{Locale: %q, Text: %q}, Description: ua.LocalizedText{Locale: %q, Text: %q}}}",
			e.Value, e.DisplayName.Locale, strings.TrimSpace(e.DisplayName.Text), e.Description.Locale, strings.TrimSpace(e.Description.Text)))
	}
	return "ua.MustVariant([]ua.ExtensionObject{" + strings.Join(elems, ", ") + "})", true, nil
}
