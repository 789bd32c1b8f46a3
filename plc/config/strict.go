package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// checkKeys walks the JSON document data against the fields of Config
// before it is decoded, for what encoding/json lets through: a key must
// name a field exactly (encoding/json matches case-insensitively), no key
// may appear twice in one object (encoding/json keeps the last), and the
// objects whose every field is required (Scaling) must have them all. The
// error names the path of the key, objects and arrays by their index
// (devices[#0].tags[#3].scaling). Syntax and type errors are left to the
// decoder, which reports them with their line and column.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walkValue(dec, reflect.TypeOf(Config{}), "")
	if _, ok := err.(*keyError); ok {
		return err
	}
	return nil // not ours: the decoder reports it
}

// keyError is a problem with a key, at a path.
type keyError struct{ path, msg string }

func (e *keyError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

// requiredAll are the structures whose every field must be present.
var requiredAll = map[reflect.Type]bool{reflect.TypeOf(Scaling{}): true}

// walkValue reads one value of Go type t at path.
func walkValue(dec *json.Decoder, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar (or null): the decoder checks its type
	}
	switch {
	case d == '{' && t.Kind() == reflect.Struct:
		return walkStruct(dec, t, path)
	case d == '{' && t.Kind() == reflect.Map:
		return walkObject(dec, path, func(key, p string) error { return walkValue(dec, t.Elem(), p) })
	case d == '[' && t.Kind() == reflect.Slice:
		for i := 0; dec.More(); i++ {
			if err := walkValue(dec, t.Elem(), fmt.Sprintf("%s[#%d]", path, i)); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	return skipRest(dec, d) // a type mismatch: the decoder reports it
}

// walkObject reads the keys and values of an object whose '{' was read,
// calling value for each key (which must read the value); a key given
// twice is an error.
func walkObject(dec *json.Decoder, path string, value func(key, path string) error) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		p := join(path, key)
		if seen[key] {
			return &keyError{p, "given twice"}
		}
		seen[key] = true
		if err := value(key, p); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// walkStruct reads an object of struct type t.
func walkStruct(dec *json.Decoder, t reflect.Type, path string) error {
	fields := jsonFields(t)
	seen := map[string]bool{}
	err := walkObject(dec, path, func(key, p string) error {
		f, ok := fields[key]
		if !ok {
			msg := fmt.Sprintf("unknown field %q", key)
			for name := range fields {
				if strings.EqualFold(name, key) {
					msg += fmt.Sprintf(" (field names are case-sensitive: %q)", name)
				}
			}
			return &keyError{p, msg}
		}
		seen[key] = true
		return walkValue(dec, f, p)
	})
	if err != nil {
		return err
	}
	if requiredAll[t] {
		var missing []string
		for i := range t.NumField() {
			if name := jsonName(t.Field(i)); name != "" && !seen[name] {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return &keyError{path, "needs " + strings.Join(missing, ", ")}
		}
	}
	return nil
}

// skipRest reads the rest of a composite value whose opening delimiter d
// was read.
func skipRest(dec *json.Decoder, d json.Delim) error {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// jsonFields maps the JSON names of t's fields to their types; the maps
// are made once per type (a document of 10,000 tags has 10,000 objects
// of one type).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		if name := jsonName(t.Field(i)); name != "" {
			m[name] = t.Field(i).Type
		}
	}
	fieldCache.Store(t, m)
	return m
}

// fieldCache holds jsonFields' maps, by type; they are never changed.
var fieldCache sync.Map

// jsonName is the JSON name of f from its tag, "" if it has none.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
