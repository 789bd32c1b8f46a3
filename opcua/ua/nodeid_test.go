package ua

import (
	"errors"
	"strings"
	"testing"
)

func TestGUIDString(t *testing.T) {
	if got, want := exampleGUID.String(), "72962B91-FA75-4AE6-8D28-B404DC7DAF63"; got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
	if got, want := (GUID{}).String(), "00000000-0000-0000-0000-000000000000"; got != want {
		t.Errorf("zero String = %s, want %s", got, want)
	}
	for _, s := range []string{
		"72962B91-FA75-4AE6-8D28-B404DC7DAF63",
		"72962b91-fa75-4ae6-8d28-b404dc7daf63",
		"{72962B91-FA75-4AE6-8D28-b404dc7daf63}",
	} {
		g, err := ParseGUID(s)
		if err != nil || g != exampleGUID {
			t.Errorf("ParseGUID(%q) = %v, %v", s, g, err)
		}
	}
	// Part 6 §5.1.3's example.
	g, err := ParseGUID("C496578A-0DFE-4B8F-870A-745238C6AEAE")
	want := GUID{0xC496578A, 0x0DFE, 0x4B8F, [8]byte{0x87, 0x0A, 0x74, 0x52, 0x38, 0xC6, 0xAE, 0xAE}}
	if err != nil || g != want {
		t.Errorf("ParseGUID(C496578A-...) = %v, %v", g, err)
	}
	for _, s := range []string{
		"",
		"72962B91-FA75-4AE6-8D28-B404DC7DAF6",   // short
		"72962B91-FA75-4AE6-8D28-B404DC7DAF633", // long
		"72962B91FA75-4AE6-8D28-B404DC7DAF63-",  // dash misplaced
		"72962B91-FA75-4AE6-8D28-B404DC7DAF6G",  // not hex
		"{72962B91-FA75-4AE6-8D28-B404DC7DAF63", // one brace
		"+2962B91-FA75-4AE6-8D28-B404DC7DAF63",
	} {
		_, err := ParseGUID(s)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Kind != "Guid" || pe.Input != s {
			t.Errorf("ParseGUID(%q): err %v", s, err)
		}
	}
}

func TestNodeIDText(t *testing.T) {
	tests := []struct {
		s string
		n NodeID
	}{
		{"i=0", NodeID{}},
		{"i=2253", NewNumericNodeID(0, 2253)},
		{"ns=1;i=4294967295", NewNumericNodeID(1, 4294967295)},
		{"ns=65535;i=1", NewNumericNodeID(65535, 1)},
		{"ns=2;s=sim.Counter", NewStringNodeID(2, "sim.Counter")},
		{"s=", NewStringNodeID(0, "")},
		{"ns=10;s=Hello:World", NewStringNodeID(10, "Hello:World")},
		{"ns=3;s=a;b=c;ns=4", NewStringNodeID(3, "a;b=c;ns=4")},
		{"s=水 Boy\n", NewStringNodeID(0, "水 Boy\n")},
		{"ns=1;g=72962B91-FA75-4AE6-8D28-B404DC7DAF63", NewGUIDNodeID(1, exampleGUID)},
		{"ns=1;b=M/RbKBsRVkePCePcx24oRA==", NewOpaqueNodeID(1, []byte{
			0x33, 0xF4, 0x5B, 0x28, 0x1B, 0x11, 0x56, 0x47, 0x8F, 0x09, 0xE3, 0xDC, 0xC7, 0x6E, 0x28, 0x44})},
		{"b=", NewOpaqueNodeID(0, nil)},
	}
	for _, tt := range tests {
		if got := tt.n.String(); got != tt.s {
			t.Errorf("String(%#v) = %q, want %q", tt.n, got, tt.s)
		}
		n, err := ParseNodeID(tt.s)
		if err != nil || n != tt.n {
			t.Errorf("ParseNodeID(%q) = %#v, %v", tt.s, n, err)
		}
	}
	// Other spellings that parse.
	for s, want := range map[string]NodeID{
		"ns=0;i=5":                               NewNumericNodeID(0, 5),
		"ns=01;i=05":                             NewNumericNodeID(1, 5),
		"g=72962b91-fa75-4ae6-8d28-b404dc7daf63": NewGUIDNodeID(0, exampleGUID),
	} {
		if n, err := ParseNodeID(s); err != nil || n != want {
			t.Errorf("ParseNodeID(%q) = %v, %v", s, n, err)
		}
	}
	for _, s := range []string{
		"",
		"5",
		"i=",
		"i=-1",
		"i=4294967296",
		"i=0x10",
		"x=1",
		"I=1",
		"ns=1",
		"ns=1;",
		"ns=;i=1",
		"ns=65536;i=1",
		"ns=-1;i=1",
		"ns=a;i=1",
		"g=1234",
		"b=!!",
		"b=AAA",
		"nsu=urn:x;i=1",
		"svr=1;i=1",
	} {
		_, err := ParseNodeID(s)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Kind != "NodeId" {
			t.Errorf("ParseNodeID(%q): err %v", s, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "ua: invalid NodeId ") {
			t.Errorf("ParseNodeID(%q): message %q", s, msg)
		}
	}
}

func TestNodeIDIsNull(t *testing.T) {
	for _, n := range []NodeID{{}, NewStringNodeID(0, ""), NewGUIDNodeID(0, GUID{}), NewOpaqueNodeID(0, []byte{})} {
		if !n.IsNull() {
			t.Errorf("%v: not null", n)
		}
	}
	for _, n := range []NodeID{NewNumericNodeID(1, 0), NewNumericNodeID(0, 1), NewStringNodeID(0, "a"), NewGUIDNodeID(0, exampleGUID), NewOpaqueNodeID(0, []byte{0}), {Type: 9}} {
		if n.IsNull() {
			t.Errorf("%v: null", n)
		}
	}
	if !(ExpandedNodeID{}).IsNull() || (ExpandedNodeID{ServerIndex: 1}).IsNull() || (ExpandedNodeID{NamespaceURI: "u"}).IsNull() {
		t.Error("ExpandedNodeID.IsNull")
	}
}

// TestNodeIDDecodeReuse checks that decoding into a NodeID of another
// kind clears the fields of the old one, so that it compares equal.
func TestNodeIDDecodeReuse(t *testing.T) {
	ids := []NodeID{
		NewNumericNodeID(0, 1),
		NewNumericNodeID(300, 1),
		NewStringNodeID(2, "abc"),
		NewGUIDNodeID(3, exampleGUID),
		NewOpaqueNodeID(4, []byte("abc")),
		NewNumericNodeID(5, 100000),
	}
	var n NodeID
	for range 2 {
		for _, want := range ids {
			d := NewDecoder(want.Encode(nil))
			n.Decode(d)
			if d.Err() != nil || n != want {
				t.Errorf("decoded %#v, want %#v (%v)", n, want, d.Err())
			}
		}
	}
}

func TestExpandedNodeIDText(t *testing.T) {
	tests := []struct {
		s string
		e ExpandedNodeID
	}{
		{"i=5", ExpandedNodeID{NodeID: NewNumericNodeID(0, 5)}},
		{"ns=2;s=foo", ExpandedNodeID{NodeID: NewStringNodeID(2, "foo")}},
		{"svr=1;nsu=urn:x;s=foo", ExpandedNodeID{NodeID: NewStringNodeID(0, "foo"), NamespaceURI: "urn:x", ServerIndex: 1}},
		{"nsu=http://opcfoundation.org/UA/;i=2253", ExpandedNodeID{NodeID: NewNumericNodeID(0, 2253), NamespaceURI: "http://opcfoundation.org/UA/"}},
		{"svr=4294967295;ns=3;g=72962B91-FA75-4AE6-8D28-B404DC7DAF63", ExpandedNodeID{NodeID: NewGUIDNodeID(3, exampleGUID), ServerIndex: 4294967295}},
		{"nsu=a%3Bb%25c;b=AQI=", ExpandedNodeID{NodeID: NewOpaqueNodeID(0, []byte{1, 2}), NamespaceURI: "a;b%c"}},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.s {
			t.Errorf("String(%#v) = %q, want %q", tt.e, got, tt.s)
		}
		e, err := ParseExpandedNodeID(tt.s)
		if err != nil || e != tt.e {
			t.Errorf("ParseExpandedNodeID(%q) = %#v, %v", tt.s, e, err)
		}
	}
	// With a URI the namespace index is not written (Part 6 §5.3.1.11).
	e := ExpandedNodeID{NodeID: NewNumericNodeID(7, 1), NamespaceURI: "u"}
	if got := e.String(); got != "nsu=u;i=1" {
		t.Errorf("String = %q", got)
	}
	// Escapes in either case.
	if e, err := ParseExpandedNodeID("nsu=a%3bb;i=1"); err != nil || e.NamespaceURI != "a;b" {
		t.Errorf("lower-case escape: %v, %v", e, err)
	}
	for _, s := range []string{"", "svr=x;i=1", "svr=1", "svr=-1;i=1", "nsu=a;", "nsu=a", "nsu=a%3;i=1", "nsu=a%;i=1", "nsu=a%zz;i=1", "svr=1;ns=1", "ns=1;nsu=a;i=1"} {
		_, err := ParseExpandedNodeID(s)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Kind != "ExpandedNodeId" {
			t.Errorf("ParseExpandedNodeID(%q): err %v", s, err)
		}
	}
}

func TestQualifiedNameString(t *testing.T) {
	if s := (QualifiedName{Name: "a"}).String(); s != "a" {
		t.Errorf("got %q", s)
	}
	if s := (QualifiedName{NamespaceIndex: 2, Name: "a"}).String(); s != "2:a" {
		t.Errorf("got %q", s)
	}
}
