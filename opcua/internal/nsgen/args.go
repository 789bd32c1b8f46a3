package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// Nodes of namespace 0 that the Arguments of methods are read with.
const (
	idArgument            = 296 // the DataType Argument
	idArgumentEncodingXML = 297 // Argument_Encoding_DefaultXml, the TypeId of an XML body
)

// argument is one Argument (OPC 10000-3 §8.6) of a method's
// InputArguments or OutputArguments property.
type argument struct {
	name        string
	dataType    uint32
	valueRank   int
	dims        []uint32 // nil: none
	description string
}

// isArgumentsProperty reports whether n is the InputArguments or
// OutputArguments property of a method: a Variable of DataType Argument
// with that BrowseName.
func isArgumentsProperty(n *node) bool {
	return n.class == classVariable && n.dataType == idArgument &&
		(n.browseName == "InputArguments" || n.browseName == "OutputArguments")
}

// xmlArguments is the Value of an arguments property in the NodeSet: a
// ListOfExtensionObject whose bodies are Arguments in their XML encoding
// (OPC 10000-6 §5.3.1.16, §5.3.6).
type xmlArguments struct {
	XMLName xml.Name `xml:"ListOfExtensionObject"`
	Objects []struct {
		TypeID string `xml:"TypeId>Identifier"`
		Body   struct {
			Arguments []struct {
				Name            string `xml:"Name"`
				DataType        string `xml:"DataType>Identifier"`
				ValueRank       *int   `xml:"ValueRank"`
				ArrayDimensions []struct {
					UInt32 []uint32 `xml:"UInt32"`
				} `xml:"ArrayDimensions"`
				Description []struct {
					Locale string `xml:"Locale"`
					Text   string `xml:"Text"`
				} `xml:"Description"`
			} `xml:"Argument"`
			Other []struct {
				XMLName xml.Name
			} `xml:",any"`
		} `xml:"Body"`
	} `xml:"ExtensionObject"`
}

// parseArguments reads the inner XML of the <Value> of an arguments
// property. Anything that is not an array of Arguments nsgen can put in
// its table (another body type, a NodeId outside namespace 0, a ValueRank
// outside int8, a localized Description) is an error, so that a new
// schema cannot lose part of an Argument silently.
func parseArguments(inner []byte) ([]argument, error) {
	var v xmlArguments
	if err := xml.NewDecoder(bytes.NewReader(inner)).Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	args := make([]argument, 0, len(v.Objects))
	for i, o := range v.Objects {
		tid, err := numericID(o.TypeID, nil)
		if err != nil {
			return nil, fmt.Errorf("argument %d: TypeId: %w", i, err)
		}
		if tid != idArgumentEncodingXML {
			return nil, fmt.Errorf("argument %d: TypeId i=%d, want i=%d", i, tid, idArgumentEncodingXML)
		}
		if len(o.Body.Arguments) != 1 || len(o.Body.Other) != 0 {
			return nil, fmt.Errorf("argument %d: the body holds no single Argument", i)
		}
		x := o.Body.Arguments[0]
		a := argument{name: strings.TrimSpace(x.Name), valueRank: -1}
		if a.dataType, err = numericID(x.DataType, nil); err != nil {
			return nil, fmt.Errorf("argument %d (%s): DataType: %w", i, a.name, err)
		}
		if x.ValueRank != nil {
			a.valueRank = *x.ValueRank
		}
		if a.valueRank < -3 || a.valueRank > 127 {
			return nil, fmt.Errorf("argument %d (%s): ValueRank %d", i, a.name, a.valueRank)
		}
		switch len(x.ArrayDimensions) {
		case 0:
		case 1:
			a.dims = x.ArrayDimensions[0].UInt32
		default:
			return nil, fmt.Errorf("argument %d (%s): ArrayDimensions twice", i, a.name)
		}
		switch len(x.Description) {
		case 0:
		case 1:
			if x.Description[0].Locale != "" {
				return nil, fmt.Errorf("argument %d (%s): Description with locale %q", i, a.name, x.Description[0].Locale)
			}
			a.description = x.Description[0].Text
		default:
			return nil, fmt.Errorf("argument %d (%s): Description twice", i, a.name)
		}
		args = append(args, a)
	}
	return args, nil
}
