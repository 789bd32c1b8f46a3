// Command nsgen generates namespace 0 of the OPC UA address space, the
// nodes the specification defines, for package addrspace from the
// normative NodeSet of the OPC UA specification.
//
// The schema file comes from the OPC Foundation's UA-Nodeset repository
// (https://github.com/OPCFoundation/UA-Nodeset, folder Schema/; see
// ../shared/opcua-schema/README.md beside the project for the exact commit).
// It is read from the -schema directory and never copied into this
// repository: only the generated Go code is committed. nsgen reads
//
//	Opc.Ua.NodeSet2.Services.xml  namespace 0 as a UANodeSet
//
// and writes -out (addrspace's zz_ns0.go): tables of the nodes, their
// attributes and references (listed at both ends), the Arguments of the
// methods, a string table, and a function giving the default values.
//
// # The subset
//
// Namespace 0 has about 5600 nodes; most are the instance declarations of
// ObjectTypes and VariableTypes (the children that a type gives its
// instances) and the deprecated XML and OPC Binary type dictionaries. A
// gateway's server needs the types and the instances that clients browse,
// so nsgen keeps:
//
//   - every ReferenceType, DataType, ObjectType and VariableType (complete
//     type hierarchies, so subtype checks hold);
//   - every node reachable from Root (i=84) by forward hierarchical
//     references, without descending from a type into its instance
//     declarations, and without the type dictionaries under the
//     "XML Schema" (i=92) and "OPC Binary" (i=93) folders: the Objects,
//     Types and Views folders and the Server object, less the optional
//     parts edged does not implement (gen.go, omitted: PubSub, history
//     configurations, certificate and user management, roles, the
//     limits of services it does not offer), which would read Good and
//     null;
//   - the properties of DataTypes (EnumStrings, EnumValues,
//     OptionSetValues);
//   - the instance declarations of BaseEventType (i=2041) and of its
//     subtypes, whole (ActiveState/Id, the condition types' methods and
//     their arguments): the event fields that event filters name and
//     that clients browse to build them;
//   - the ModellingRule objects that kept nodes point to.
//
// References whose other end is not kept are dropped, so every reference
// in the output leads to a node in the output and is listed at both of its
// ends.
//
// Default values are kept for the built-in scalar and array types
// (numbers, Boolean, String, DateTime, LocalizedText, ...). The values of
// the InputArguments and OutputArguments properties of methods, arrays of
// ExtensionObjects with Argument bodies, are kept in a table of their own
// (ns0Args: name, DataType, ValueRank, ArrayDimensions and Description of
// each, the strings in the string table) that package addrspace turns into
// ua.Argument values when it builds the space; an Argument nsgen cannot
// represent there fails the run. The EnumValues of DataTypes, arrays of
// ExtensionObjects with EnumValueType bodies, are kept as ua.EnumValueType
// values; other values holding ExtensionObjects are left out and the
// variable's value is null.
//
// Run it through go generate in opcua/addrspace:
//
//	go generate ./opcua/addrspace
//
// With -events it writes instead the event types of namespace 0 for
// package events (zz_eventtypes.go: each type's supertype and the fields
// its instance declarations give its events; events.go), through go
// generate in opcua/events.
//
// The output is a pure function of the schema file, and a test checks
// that the committed file equals a fresh run.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// nodeSetFile is the NodeSet nsgen reads from the schema directory.
const nodeSetFile = "Opc.Ua.NodeSet2.Services.xml"

func main() {
	schema := flag.String("schema", "", "directory holding "+nodeSetFile)
	out := flag.String("out", "zz_ns0.go", "file to write")
	events := flag.Bool("events", false, "write the event types of namespace 0 for package events (events.go) instead")
	verbose := flag.Bool("v", false, "print notes on what was left out")
	flag.Parse()
	if *schema == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: nsgen -schema DIR [-events] [-out FILE]")
		os.Exit(2)
	}
	var src []byte
	var notes []string
	var err error
	if *events {
		src, err = generateEvents(filepath.Join(*schema, nodeSetFile))
	} else {
		src, notes, err = generate(filepath.Join(*schema, nodeSetFile))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nsgen:", err)
		os.Exit(1)
	}
	if *verbose {
		for _, n := range notes {
			fmt.Fprintln(os.Stderr, "nsgen: note:", n)
		}
	}
	if old, err := os.ReadFile(*out); err == nil && string(old) == string(src) {
		return
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "nsgen:", err)
		os.Exit(1)
	}
}
