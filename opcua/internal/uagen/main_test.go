package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/edged/edged/opcua/ua/id"
)

// schemaDir is where the schema files live beside the project, as seen from
// this directory (go:generate in opcua/ua uses ../../../shared/opcua-schema).
const schemaDir = "../../../../shared/opcua-schema"

// uaDir is the generator's output directory.
const uaDir = "../../ua"

func needSchema(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(schemaDir, "Opc.Ua.Types.bsd")); err != nil {
		peer.Missing(t, "schema files not found (../shared/opcua-schema beside the project): %v", err)
	}
	return schemaDir
}

// TestGeneratedFilesUpToDate regenerates the output and compares it with the
// committed files byte for byte, so that a generated file edited by hand,
// or a generator change without go generate, fails the build.
func TestGeneratedFilesUpToDate(t *testing.T) {
	files, _, err := generate(needSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		want = append(want, f.name)
		path := filepath.Join(uaDir, filepath.FromSlash(f.name))
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v (run go generate ./opcua/ua)", err)
			continue
		}
		if !bytes.Equal(got, f.data) {
			t.Errorf("%s differs from the generator's output; run go generate ./opcua/ua and do not edit generated files", path)
		}
	}
	// No stale generated files may be left behind.
	var have []string
	for _, pattern := range []string{"zz_*.go", "id/zz_*.go", "status/zz_*.go"} {
		m, err := filepath.Glob(filepath.Join(uaDir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(uaDir, p)
			have = append(have, filepath.ToSlash(rel))
		}
	}
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(have, want) {
		t.Errorf("generated files in %s: %q, want %q", uaDir, have, want)
	}
}

// TestGenerateDeterministic checks that two runs give the same bytes.
func TestGenerateDeterministic(t *testing.T) {
	a, _, err := generate(needSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := generate(schemaDir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i].name != b[i].name || !bytes.Equal(a[i].data, b[i].data) {
			t.Errorf("%s differs between two runs", a[i].name)
		}
	}
}

var generatedHeader = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

func TestHeader(t *testing.T) {
	if !generatedHeader.MatchString(header[:len(header)-1]) {
		t.Errorf("header %q does not match %v", header, generatedHeader)
	}
}

// TestNodeIDNames checks id.Name against every row of NodeIds.csv.
func TestNodeIDNames(t *testing.T) {
	rows, err := readNodeIDs(filepath.Join(needSchema(t), "NodeIds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	maxID := uint32(0)
	for _, r := range rows {
		if got := id.Name(r.id); got != r.name {
			t.Errorf("id.Name(%d) = %q, want %q", r.id, got, r.name)
		}
		maxID = max(maxID, r.id)
	}
	known := map[uint32]bool{}
	for _, r := range rows {
		known[r.id] = true
	}
	for _, n := range []uint32{0, maxID + 1, 1<<32 - 1} {
		if !known[n] && id.Name(n) != "" {
			t.Errorf("id.Name(%d) = %q, want \"\"", n, id.Name(n))
		}
	}
}

func TestGoName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ReadValueId", "ReadValueID"},
		{"EndpointUrl", "EndpointURL"},
		{"NodeId", "NodeID"},
		{"IdType", "IDType"},
		{"Identifier", "Identifier"},
		{"ServerUri", "ServerURI"},
		{"ServerUris", "ServerURIs"},
		{"DiscoveryUrls", "DiscoveryURLs"},
		{"LocaleIds", "LocaleIDs"},
		{"XmlEncodeId", "XMLEncodeID"},
		{"Uristic", "Uristic"},
		{"Idsomething", "Idsomething"},
		{"NodeIdType", "NodeIDType"},
		{"BadNodeIdUnknown", "BadNodeIDUnknown"},
		{"PriorityValue_DSCP", "PriorityValueDSCP"},
		{"UABinaryFileDataType", "UABinaryFileDataType"},
		{"Id", "ID"},
		{"Ids", "IDs"},
	} {
		if got := goName(tc.in); got != tc.want {
			t.Errorf("goName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSchemaShape pins facts about the schema the generator relies on, so
// a new schema release that changes them is noticed.
func TestSchemaShape(t *testing.T) {
	s, err := loadSchema(needSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*structType{}
	for _, st := range s.structs {
		byName[st.name] = st
		if st.encodingID == "" {
			t.Errorf("%s has no DefaultBinary encoding id", st.name)
		}
	}
	rr := byName["ReadRequest"]
	if rr == nil {
		t.Fatal("no ReadRequest")
	}
	var got []string
	for _, f := range rr.fields {
		n := f.goName + " " + f.typ.goType
		if f.array {
			n = f.goName + " []" + f.typ.goType
		}
		got = append(got, n)
	}
	want := []string{"RequestHeader RequestHeader", "MaxAge float64", "TimestampsToReturn TimestampsToReturn", "NodesToRead []ReadValueID"}
	if !slices.Equal(got, want) {
		t.Errorf("ReadRequest fields %q, want %q", got, want)
	}
	// ReadValueId: NodeId 2 + UInt32 4 + String 4 + QualifiedName 6.
	if m := byName["ReadValueId"].minSize; m != 16 {
		t.Errorf("ReadValueId minimum size %d, want 16", m)
	}
	// Inherited fields come once, first.
	if f := byName["UABinaryFileDataType"].fields; len(f) != 7 || f[0].goName != "Namespaces" || f[4].goName != "SchemaLocation" {
		t.Errorf("UABinaryFileDataType fields wrong: %d", len(f))
	}
}
