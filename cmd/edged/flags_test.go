package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestFlagsDocumented: docs/flags.md lists exactly the flags edged
// defines (and --help, which the flag package answers).
func TestFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/flags.md")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)[ `]").FindAllSubmatch(doc, -1) {
		listed = append(listed, string(m[1]))
	}
	var cfg config
	fs, _ := newFlagSet(&cfg, io.Discard)
	defined := []string{"help"}
	fs.VisitAll(func(f *flag.Flag) { defined = append(defined, f.Name) })
	slices.Sort(listed)
	slices.Sort(defined)
	if !slices.Equal(listed, defined) {
		t.Errorf("docs/flags.md lists %v\nedged defines %v", listed, defined)
	}
}
