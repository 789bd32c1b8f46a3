package configsvc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStore: versions count up, survive a reopen with their metadata,
// only the newest Keep stay; a damaged newest version is passed over
// (the one before is current) and named; a temporary file of a cut write
// is removed.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Current(); err != ErrEmpty {
		t.Fatalf("empty store: %v", err)
	}
	for i := 1; i <= Keep+5; i++ {
		m, err := s.Add(Meta{User: "alice", Comment: fmt.Sprint("change ", i), Summary: "s"}, []byte(fmt.Sprintf(`{"n": %d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		if m.Version != uint32(i) {
			t.Fatalf("version %d, want %d", m.Version, i)
		}
	}
	if _, err := s.Add(Meta{}, []byte("not json")); err == nil {
		t.Fatal("a document that is not JSON was stored")
	}
	if _, err := s.SetState(Keep+5, StateConfirmed); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".v0000000026.json.tmp123"), []byte("{"), 0o600)

	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := s2.History()
	if len(h) != Keep || h[0].Version != 6 || h[len(h)-1].Version != Keep+5 || h[len(h)-1].State != StateConfirmed || h[len(h)-1].User != "alice" {
		t.Fatalf("history after reopen: %d versions, %+v .. %+v", len(h), h[0], h[len(h)-1])
	}
	if _, err := os.Stat(filepath.Join(dir, ".v0000000026.json.tmp123")); !os.IsNotExist(err) {
		t.Fatal("the temporary file is still there")
	}
	m, doc, _ := s2.Current()
	if m.Version != Keep+5 || string(doc) != fmt.Sprintf(`{"n":%d}`, Keep+5) {
		t.Fatalf("current %d %s", m.Version, doc)
	}

	// Damage the newest: one byte of its document changed, then the one
	// before it cut in half.
	newest := s2.path(Keep + 5)
	b, _ := os.ReadFile(newest)
	os.WriteFile(newest, []byte(strings.Replace(string(b), `"n":25`, `"n":26`, 1)), 0o600)
	prev := s2.path(Keep + 4)
	b, _ = os.ReadFile(prev)
	os.WriteFile(prev, b[:len(b)/2], 0o600)
	s3, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, _, _ = s3.Current()
	if m.Version != Keep+3 {
		t.Fatalf("current after damage: %d, want %d", m.Version, Keep+3)
	}
	if d := s3.Damaged(); len(d) != 2 || !strings.Contains(d[0], "checksum") && !strings.Contains(d[1], "checksum") {
		t.Fatalf("damaged: %q", d)
	}
	if m, _ := s3.Add(Meta{}, []byte(`{}`)); m.Version != Keep+4 {
		t.Fatalf("the next version is %d", m.Version)
	}

	// Documents are read from disk when asked for: a version damaged
	// while the store is open is passed over then, as Open would.
	b, _ = os.ReadFile(s3.path(Keep + 4))
	os.WriteFile(s3.path(Keep+4), []byte(strings.Replace(string(b), `"document":{}`, `"document":[]`, 1)), 0o600)
	if m, doc, err := s3.Current(); err != nil || m.Version != Keep+3 || string(doc) != fmt.Sprintf(`{"n":%d}`, Keep+3) {
		t.Fatalf("current after damage while open: %d %s %v", m.Version, doc, err)
	}
	if d := s3.Damaged(); len(d) != 3 || !strings.Contains(d[2], "v0000000024.json") {
		t.Fatalf("damaged: %q", d)
	}
	if _, _, ok := s3.Get(Keep + 4); ok {
		t.Error("Get of the damaged version")
	}
	if _, err := os.Stat(s3.path(Keep+4) + ".damaged"); err != nil {
		t.Errorf("the damaged file: %v", err)
	}
	os.WriteFile(s3.path(Keep+2), []byte("{"), 0o600)
	if _, err := s3.SetState(Keep+2, StateReverted); err == nil {
		t.Error("SetState of a version damaged on disk")
	}
	if _, doc, ok := s3.Get(Keep + 1); !ok || string(doc) != fmt.Sprintf(`{"n":%d}`, Keep+1) {
		t.Errorf("Get(%d): %s %v", Keep+1, doc, ok)
	}
}

// TestAuditRotates: the log rotates at MaxAudit, keeping one old file.
func TestAuditRotates(t *testing.T) {
	dir := t.TempDir()
	a := NewAudit(dir)
	long := strings.Repeat("x", 10000)
	for range 300 {
		if err := a.Log(AuditEntry{User: "u", Action: "apply", Summary: long}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"audit.log", "audit.log.1"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Size() > MaxAudit || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", name, fi, err)
		}
	}
}
