// Command uagen generates the OPC UA types, constants and their UA Binary
// codecs of package ua from the normative schema files of the OPC UA
// specification.
//
// The schema files come from the OPC Foundation's UA-Nodeset repository
// (https://github.com/OPCFoundation/UA-Nodeset, folder Schema/; see
// ../shared/opcua-schema/README.md beside the project for the exact commit).
// They are read from the -schema directory and are never copied into this
// repository: only the generated Go code is committed. uagen reads
//
//	Opc.Ua.Types.bsd  structured and enumerated DataTypes (OPC Binary schema)
//	NodeIds.csv       SymbolName,Identifier,NodeClass of namespace 0
//	StatusCode.csv    SymbolName,Code,Description
//	AttributeIds.csv  Name,Id
//
// and writes, under -out (the ua package directory):
//
//	status/zz_codes.go status.Code constants and their names and descriptions
//	zz_attributes.go   AttributeID and its constants
//	zz_enums.go        enumerated DataTypes and option sets
//	zz_types.go        structured DataTypes with Encode, Decode, BinaryEncodingID
//	zz_types_test.go   round-trip tests of every generated structure
//	id/zz_nodeids.go   namespace-0 NodeId constants and id.Name
//
// Run it through go generate in opcua/ua:
//
//	go generate ./opcua/ua
//
// The output is a pure function of the schema files: running uagen twice
// gives identical bytes, and a test checks that the committed files equal a
// fresh run, so generated files are never edited by hand.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	schema := flag.String("schema", "", "directory holding Opc.Ua.Types.bsd, NodeIds.csv, StatusCode.csv and AttributeIds.csv")
	out := flag.String("out", ".", "directory of package ua to write the generated files to")
	verbose := flag.Bool("v", false, "print the schema oddities met")
	flag.Parse()
	if *schema == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: uagen -schema DIR [-out DIR]")
		os.Exit(2)
	}
	files, notes, err := generate(*schema)
	if err != nil {
		fmt.Fprintln(os.Stderr, "uagen:", err)
		os.Exit(1)
	}
	if *verbose {
		for _, n := range notes {
			fmt.Fprintln(os.Stderr, "uagen: note:", n)
		}
	}
	for _, f := range files {
		path := filepath.Join(*out, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "uagen:", err)
			os.Exit(1)
		}
		if err := writeIfChanged(path, f.data); err != nil {
			fmt.Fprintln(os.Stderr, "uagen:", err)
			os.Exit(1)
		}
	}
}

// writeIfChanged writes data to path unless the file already holds it, so
// an unchanged output keeps its modification time (and the build cache).
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}

// outputFile is one generated file, named relative to the -out directory
// with forward slashes.
type outputFile struct {
	name string
	data []byte
}

// generate reads the schema directory and returns every output file, and
// notes on the schema oddities it met.
func generate(schemaDir string) ([]outputFile, []string, error) {
	s, err := loadSchema(schemaDir)
	if err != nil {
		return nil, nil, err
	}
	gens := []struct {
		name string
		gen  func(*schema) ([]byte, error)
	}{
		{"status/zz_codes.go", genStatusCodes},
		{"zz_attributes.go", genAttributes},
		{"zz_enums.go", genEnums},
		{"zz_types.go", genTypes},
		{"zz_types_test.go", genTypesTest},
		{"id/zz_nodeids.go", genNodeIDs},
	}
	var files []outputFile
	for _, g := range gens {
		data, err := g.gen(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", g.name, err)
		}
		files = append(files, outputFile{g.name, data})
	}
	return files, s.notes, nil
}
