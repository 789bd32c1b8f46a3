package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/edged/edged/internal/testutil/peer"
)

// schemaDir is where the schema files live beside the project, as seen from
// this directory (go:generate in opcua/addrspace uses ../../../shared/opcua-schema).
const schemaDir = "../../../../shared/opcua-schema"

// outFile is the generator's committed output.
const outFile = "../../addrspace/zz_ns0.go"

func needSchema(t *testing.T) string {
	t.Helper()
	path := filepath.Join(schemaDir, nodeSetFile)
	if _, err := os.Stat(path); err != nil {
		peer.Missing(t, "schema files not found (../shared/opcua-schema beside the project): %v", err)
	}
	return path
}

// TestGeneratedFileUpToDate regenerates zz_ns0.go and compares it with the
// committed file byte for byte, so that a hand edit, or a generator change
// without go generate, fails the build.
func TestGeneratedFileUpToDate(t *testing.T) {
	src, _, err := generate(needSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatalf("%v (run go generate ./opcua/addrspace)", err)
	}
	if !bytes.Equal(got, src) {
		t.Errorf("%s differs from the generator's output; run go generate ./opcua/addrspace and do not edit generated files", outFile)
	}
}

func TestGenerateDeterministic(t *testing.T) {
	path := needSchema(t)
	a, _, err := generate(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := generate(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two runs differ")
	}
}

func TestHeader(t *testing.T) {
	re := regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)
	if line, _, _ := strings.Cut(header, "\n"); !re.MatchString(line) {
		t.Errorf("header %q does not match %v", header, re)
	}
}

func TestValueExpr(t *testing.T) {
	for _, tc := range []struct{ in, want, skip string }{
		{`<Boolean xmlns="x">true</Boolean>`, `ua.MustVariant(true)`, ""},
		{`<Int32>-5</Int32>`, `ua.MustVariant(int32(-5))`, ""},
		{`<Double>1.5</Double>`, `ua.MustVariant(float64(1.5))`, ""},
		{`<String>a"b</String>`, `ua.MustVariant("a\"b")`, ""},
		{`<DateTime>1601-01-01T00:00:01Z</DateTime>`, `ua.MustVariant(ua.TimeFromTicks(10000000))`, ""},
		{`<ByteString>AAE=</ByteString>`, `ua.MustVariant([]byte("\x00\x01"))`, ""},
		{`<LocalizedText><Locale>en</Locale><Text>Hi</Text></LocalizedText>`, `ua.MustVariant(ua.LocalizedText{Locale: "en", Text: "Hi"})`, ""},
		{`<ListOfString><String>a</String><String>b</String></ListOfString>`, `ua.MustVariant([]string{"a", "b"})`, ""},
		{`<ListOfLocalizedText><LocalizedText><Text>x</Text></LocalizedText></ListOfLocalizedText>`, `ua.MustVariant([]ua.LocalizedText{{Locale: "", Text: "x"}})`, ""},
		{`<ExtensionObject><TypeId/></ExtensionObject>`, "", "ExtensionObject"},
		{`<ListOfExtensionObject><ExtensionObject/></ListOfExtensionObject>`, "", "ExtensionObject"},
		{`<ListOfExtensionObject><ExtensionObject><TypeId><Identifier>i=7616</Identifier></TypeId><Body><EnumValueType><Value>2</Value><DisplayName><Text>Optional</Text></DisplayName><Description><Text>May appear.</Text></Description></EnumValueType></Body></ExtensionObject></ListOfExtensionObject>`,
			`ua.MustVariant([]ua.ExtensionObject{{Body: &ua.EnumValueType{Value: 2, DisplayName: ua.LocalizedText{Locale: "", Text: "Optional"}, Description: ua.LocalizedText{Locale: "", Text: "May appear."}}}})`, ""},
	} {
		got, skip, err := valueExpr([]byte(tc.in))
		if err != nil || got != tc.want || skip != tc.skip {
			t.Errorf("valueExpr(%s) = %q, %q, %v; want %q, %q", tc.in, got, skip, err, tc.want, tc.skip)
		}
	}
}

func TestParseArguments(t *testing.T) {
	const eo = `<ExtensionObject><TypeId><Identifier>i=297</Identifier></TypeId><Body>%s</Body></ExtensionObject>`
	list := func(bodies ...string) []byte {
		var b strings.Builder
		b.WriteString("\n  <ListOfExtensionObject xmlns=\"http://opcfoundation.org/UA/2008/02/Types.xsd\">")
		for _, body := range bodies {
			fmt.Fprintf(&b, eo, body)
		}
		b.WriteString("</ListOfExtensionObject>\n")
		return []byte(b.String())
	}
	got, err := parseArguments(list(
		`<Argument><Name>SubscriptionId</Name><DataType><Identifier>i=7</Identifier></DataType><ValueRank>-1</ValueRank><ArrayDimensions /></Argument>`,
		`<Argument><Name>Handles</Name><DataType><Identifier>i=7</Identifier></DataType><ValueRank>2</ValueRank>`+
			`<ArrayDimensions><UInt32>0</UInt32><UInt32>4</UInt32></ArrayDimensions><Description><Text>the handles</Text></Description></Argument>`,
		`<Argument><Name>Flag</Name><DataType><Identifier>i=1</Identifier></DataType></Argument>`,
	))
	want := []argument{
		{name: "SubscriptionId", dataType: 7, valueRank: -1},
		{name: "Handles", dataType: 7, valueRank: 2, dims: []uint32{0, 4}, description: "the handles"},
		{name: "Flag", dataType: 1, valueRank: -1},
	}
	if err != nil || !slices.EqualFunc(got, want, func(a, b argument) bool {
		return a.name == b.name && a.dataType == b.dataType && a.valueRank == b.valueRank &&
			slices.Equal(a.dims, b.dims) && (a.dims == nil) == (b.dims == nil) && a.description == b.description
	}) {
		t.Errorf("parseArguments = %+v, %v; want %+v", got, err, want)
	}
	if got, err := parseArguments(list()); err != nil || len(got) != 0 {
		t.Errorf("empty list: %v, %v", got, err)
	}

	const good = `<Argument><Name>A</Name><DataType><Identifier>i=7</Identifier></DataType><ValueRank>-1</ValueRank></Argument>`
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"other TypeId", []byte(strings.Replace(string(list(good)), "i=297", "i=7617", 1))},
		{"no TypeId", []byte(strings.Replace(string(list(good)), "<TypeId><Identifier>i=297</Identifier></TypeId>", "", 1))},
		{"other body", list(`<EnumValueType><Value>1</Value></EnumValueType>`)},
		{"two bodies", list(good + good)},
		{"empty body", list(``)},
		{"DataType in another namespace", list(strings.Replace(good, "i=7", "ns=1;i=7", 1))},
		{"string DataType", list(strings.Replace(good, "i=7", "s=x", 1))},
		{"ValueRank too large", list(strings.Replace(good, "-1", "200", 1))},
		{"ValueRank not a number", list(strings.Replace(good, "-1", "x", 1))},
		{"negative dimension", list(strings.Replace(good, "</ValueRank>", "</ValueRank><ArrayDimensions><UInt32>-1</UInt32></ArrayDimensions>", 1))},
		{"localized Description", list(strings.Replace(good, "</ValueRank>", "</ValueRank><Description><Locale>de</Locale><Text>x</Text></Description>", 1))},
		{"not a list", []byte(`<ExtensionObject/>`)},
		{"truncated", list(good)[:60]},
	} {
		if got, err := parseArguments(tc.in); err == nil {
			t.Errorf("%s: %+v, want an error", tc.name, got)
		}
	}
}
