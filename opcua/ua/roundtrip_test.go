package ua

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

// codecPtr is a pointer to a generated structure.
type codecPtr[T any] interface {
	*T
	Encode(b []byte) []byte
	Decode(d *Decoder)
}

// testRoundTrip checks the codec of a generated structure T with a value
// filled by fill (every field non-zero): the encoding decodes without error
// into a new value, consuming every byte, into a value equal to the
// original that encodes to the same bytes; the same holds when decoding
// into a value already used for other content; and every truncated prefix
// of the encoding fails with an error, without panicking.
func testRoundTrip[T any, P codecPtr[T]](t *testing.T, fill func(*T, int)) {
	t.Helper()
	var orig T
	fill(&orig, 1)
	enc := P(&orig).Encode(nil)

	var fresh T
	checkDecode[T, P](t, "new value", enc, &orig, &fresh)

	// A value used before, with different content and slices of the same
	// length, must be overwritten completely.
	var used T
	fill(&used, 7)
	checkDecode[T, P](t, "used value", enc, &orig, &used)

	var d Decoder
	for n := range len(enc) {
		var v T
		d.Reset(enc[:n])
		P(&v).Decode(&d)
		if d.Err() == nil {
			t.Errorf("decoding the first %d of %d bytes: no error", n, len(enc))
			break
		}
	}
}

func checkDecode[T any, P codecPtr[T]](t *testing.T, what string, enc []byte, want, got *T) {
	t.Helper()
	d := NewDecoder(enc)
	P(got).Decode(d)
	if err := d.Err(); err != nil {
		t.Fatalf("decode into %s: %v", what, err)
	}
	if d.Remaining() != 0 {
		t.Errorf("decode into %s: %d of %d bytes left", what, d.Remaining(), len(enc))
	}
	if re := P(got).Encode(nil); !bytes.Equal(re, enc) {
		t.Errorf("decode into %s: re-encoding differs\n got % x\nwant % x", what, re, enc)
	}
	if !reflect.DeepEqual(*want, *got) {
		t.Errorf("decode into %s: value differs: %s", what, firstDiff(reflect.ValueOf(*want), reflect.ValueOf(*got), ""))
	}
}

// testDecodeNoAlloc checks that decoding an encoding of T again into the
// value it was decoded into does not allocate.
func testDecodeNoAlloc[T any, P codecPtr[T]](t *testing.T, fill func(*T, int)) {
	t.Helper()
	var orig T
	fill(&orig, 1)
	enc := P(&orig).Encode(nil)
	var v T
	var d Decoder
	d.Reset(enc)
	P(&v).Decode(&d)
	allocs := testing.AllocsPerRun(100, func() {
		d.Reset(enc)
		P(&v).Decode(&d)
	})
	if d.Err() != nil {
		t.Fatal(d.Err())
	}
	if allocs != 0 {
		t.Errorf("decoding again allocates %v times", allocs)
	}
}

// firstDiff describes where a and b first differ, as a field path and the
// two values. It reads unexported fields too (Variant, time.Time).
func firstDiff(a, b reflect.Value, path string) string {
	if a.Kind() != b.Kind() {
		return fmt.Sprintf("%s: kind %s != %s", path, a.Kind(), b.Kind())
	}
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if s := firstDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); s != "" {
				return s
			}
		}
		return ""
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v != nil %v", path, a.IsNil(), b.IsNil())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d != %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if s := firstDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); s != "" {
				return s
			}
		}
		return ""
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: nil %v != nil %v", path, a.IsNil(), b.IsNil())
			}
			return ""
		}
		if a.Kind() == reflect.Interface && a.Elem().Type() != b.Elem().Type() {
			return fmt.Sprintf("%s: type %s != %s", path, a.Elem().Type(), b.Elem().Type())
		}
		return firstDiff(a.Elem(), b.Elem(), path)
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d != %d", path, a.Len(), b.Len())
		}
		return "" // no generated or built-in type holds a map
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		return fmt.Sprintf("%s: %v != %v", path, a, b)
	}
	return ""
}
