package main

import (
	"bytes"
	"os"
	"regexp"
	"testing"

	pconfig "github.com/edged/edged/plc/config"
)

// docBlock returns the first fenced block of language lang after the
// heading in the Markdown file doc (relative to the repository root).
func docBlock(t *testing.T, doc, heading, lang string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../" + doc)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("\n"+heading+"\n"))
	if i < 0 {
		t.Fatalf("%s has no heading %q", doc, heading)
	}
	b = b[i:]
	start := bytes.Index(b, []byte("\n```"+lang+"\n"))
	if start < 0 {
		t.Fatalf("%s has no ```%s block after %q", doc, lang, heading)
	}
	b = b[start+len("\n```"+lang+"\n"):]
	end := bytes.Index(b, []byte("\n```\n"))
	if end < 0 {
		t.Fatalf("%s: the ```%s block after %q does not end", doc, lang, heading)
	}
	return b[:end+1]
}

// TestReadmeConfiguration: the example configuration of
// docs/configuration.md parses and validates, and so does it with the CSV
// tag list there imported.
func TestReadmeConfiguration(t *testing.T) {
	c, err := pconfig.Parse(docBlock(t, "docs/configuration.md", "### The configuration file", "json"))
	if err != nil {
		t.Fatalf("README's configuration: %v", err)
	}
	if err := c.ImportCSV(bytes.NewReader(docBlock(t, "docs/configuration.md", "### Tag lists in CSV", "csv")), "plc1"); err != nil {
		t.Fatalf("README's CSV: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("README's configuration with its CSV: %v", err)
	}
}

// TestReadmeFrontPage: the README stays a front page (200 lines at most)
// and the files it links to exist.
func TestReadmeFrontPage(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 200 {
		t.Errorf("README.md has %d lines, more than 200: the details go to docs/", n)
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllSubmatch(b, -1) {
		if _, err := os.Stat("../../" + string(m[1])); err != nil {
			t.Errorf("README.md links to %s: %v", m[1], err)
		}
	}
}
