package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Node classes, as ua.NodeClass numbers them.
const (
	classObject        = 1
	classVariable      = 2
	classMethod        = 4
	classObjectType    = 8
	classVariableType  = 16
	classReferenceType = 32
	classDataType      = 64
	classView          = 128
)

var classOfElement = map[string]uint8{
	"UAObject":        classObject,
	"UAVariable":      classVariable,
	"UAMethod":        classMethod,
	"UAObjectType":    classObjectType,
	"UAVariableType":  classVariableType,
	"UAReferenceType": classReferenceType,
	"UADataType":      classDataType,
	"UAView":          classView,
}

// xmlNode is one UA* element of a UANodeSet (UANodeSet.xsd). Attributes
// that the NodeSet leaves out take the schema's defaults, applied by
// parse.
type xmlNode struct {
	NodeID                  string  `xml:"NodeId,attr"`
	BrowseName              string  `xml:"BrowseName,attr"`
	SymbolicName            string  `xml:"SymbolicName,attr"`
	DataType                string  `xml:"DataType,attr"`
	ValueRank               *int    `xml:"ValueRank,attr"`
	ArrayDimensions         string  `xml:"ArrayDimensions,attr"`
	AccessLevel             *uint8  `xml:"AccessLevel,attr"`
	MinimumSamplingInterval float64 `xml:"MinimumSamplingInterval,attr"`
	Historizing             bool    `xml:"Historizing,attr"`
	IsAbstract              bool    `xml:"IsAbstract,attr"`
	Symmetric               bool    `xml:"Symmetric,attr"`
	EventNotifier           uint8   `xml:"EventNotifier,attr"`
	ContainsNoLoops         bool    `xml:"ContainsNoLoops,attr"`
	Executable              *bool   `xml:"Executable,attr"`
	DisplayName             []struct {
		Locale string `xml:"Locale,attr"`
		Text   string `xml:",chardata"`
	} `xml:"DisplayName"`
	Description []struct {
		Locale string `xml:"Locale,attr"`
		Text   string `xml:",chardata"`
	} `xml:"Description"`
	InverseName []struct {
		Locale string `xml:"Locale,attr"`
		Text   string `xml:",chardata"`
	} `xml:"InverseName"`
	References []struct {
		Type      string `xml:"ReferenceType,attr"`
		IsForward *bool  `xml:"IsForward,attr"`
		Target    string `xml:",chardata"`
	} `xml:"References>Reference"`
	Value *struct {
		Inner []byte `xml:",innerxml"`
	} `xml:"Value"`
}

// node is a parsed node of namespace 0.
type node struct {
	id          uint32
	class       uint8
	symbol      string // SymbolicName, else BrowseName
	browseName  string
	displayName string
	description string
	inverseName string
	dataType    uint32
	valueRank   int
	dims        []uint32
	accessLevel uint8
	minSampling float64
	historizing bool
	isAbstract  bool
	symmetric   bool
	eventNotif  uint8
	noLoops     bool
	executable  bool
	refs        []xref // as listed on the node in the NodeSet
	value       []byte // inner XML of <Value>, nil if none
}

type xref struct {
	typ     uint32
	target  uint32
	forward bool
}

// nodeSet is the parsed NodeSet.
type nodeSet struct {
	nodes []*node // in document order
	byID  map[uint32]*node
}

func parse(path string) (*nodeSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	aliases := map[string]string{}
	ns := &nodeSet{byID: map[uint32]*node{}}
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch name := se.Name.Local; {
		case name == "Alias":
			var a struct {
				Alias string `xml:"Alias,attr"`
				ID    string `xml:",chardata"`
			}
			if err := dec.DecodeElement(&a, &se); err != nil {
				return nil, err
			}
			aliases[a.Alias] = strings.TrimSpace(a.ID)
		case classOfElement[name] != 0:
			var x xmlNode
			if err := dec.DecodeElement(&x, &se); err != nil {
				return nil, err
			}
			n, err := convert(&x, classOfElement[name], aliases)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", name, x.NodeID, err)
			}
			if ns.byID[n.id] != nil {
				return nil, fmt.Errorf("node i=%d twice", n.id)
			}
			ns.nodes = append(ns.nodes, n)
			ns.byID[n.id] = n
		}
	}
	return ns, nil
}

// numericID parses "i=123" (namespace 0), resolving an alias first.
func numericID(s string, aliases map[string]string) (uint32, error) {
	s = strings.TrimSpace(s)
	if a, ok := aliases[s]; ok {
		s = a
	}
	rest, ok := strings.CutPrefix(s, "i=")
	if !ok {
		return 0, fmt.Errorf("NodeId %q is not a numeric id of namespace 0", s)
	}
	n, err := strconv.ParseUint(rest, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("NodeId %q: %w", s, err)
	}
	return uint32(n), nil
}

func convert(x *xmlNode, class uint8, aliases map[string]string) (*node, error) {
	id, err := numericID(x.NodeID, aliases)
	if err != nil {
		return nil, err
	}
	n := &node{
		id:          id,
		class:       class,
		browseName:  x.BrowseName,
		symbol:      x.SymbolicName,
		valueRank:   -1,
		minSampling: x.MinimumSamplingInterval,
		historizing: x.Historizing,
		isAbstract:  x.IsAbstract,
		symmetric:   x.Symmetric,
		eventNotif:  x.EventNotifier,
		noLoops:     x.ContainsNoLoops,
		executable:  true,
	}
	// A BrowseName may carry its namespace index as a prefix "ns:".
	if pfx, rest, ok := strings.Cut(n.browseName, ":"); ok {
		if _, err := strconv.ParseUint(pfx, 10, 16); err == nil {
			if pfx != "0" {
				return nil, fmt.Errorf("BrowseName %q outside namespace 0", n.browseName)
			}
			n.browseName = rest
		}
	}
	if n.symbol == "" {
		n.symbol = n.browseName
	}
	for _, lt := range x.DisplayName {
		if lt.Locale == "" || n.displayName == "" {
			n.displayName = lt.Text
		}
	}
	if n.displayName == "" {
		n.displayName = n.browseName
	}
	for _, lt := range x.Description {
		n.description = lt.Text
	}
	for _, lt := range x.InverseName {
		n.inverseName = lt.Text
	}
	if class == classVariable || class == classVariableType {
		n.dataType = 24 // BaseDataType, the schema's default
		if x.DataType != "" {
			if n.dataType, err = numericID(x.DataType, aliases); err != nil {
				return nil, err
			}
		}
		if x.ValueRank != nil {
			n.valueRank = *x.ValueRank
		}
		if class == classVariable {
			n.accessLevel = 1 // CurrentRead, the schema's default
			if x.AccessLevel != nil {
				n.accessLevel = *x.AccessLevel
			}
		}
		if x.ArrayDimensions != "" {
			for _, d := range strings.Split(x.ArrayDimensions, ",") {
				v, err := strconv.ParseUint(strings.TrimSpace(d), 10, 32)
				if err != nil {
					return nil, fmt.Errorf("ArrayDimensions %q: %w", x.ArrayDimensions, err)
				}
				n.dims = append(n.dims, uint32(v))
			}
		}
		if x.Value != nil {
			n.value = x.Value.Inner
		}
	}
	if x.Executable != nil {
		n.executable = *x.Executable
	}
	for _, r := range x.References {
		typ, err := numericID(r.Type, aliases)
		if err != nil {
			return nil, err
		}
		target, err := numericID(r.Target, aliases)
		if err != nil {
			return nil, err
		}
		n.refs = append(n.refs, xref{typ: typ, target: target, forward: r.IsForward == nil || *r.IsForward})
	}
	return n, nil
}
