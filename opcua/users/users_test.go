package users

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestAccounts(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	if _, err := s.Authenticate("op", []byte("secret-pass")); !errors.Is(err, ErrDenied) {
		t.Fatalf("no file: %v, want ErrDenied", err)
	}
	if err := s.Add("op", []string{Operator}, []byte("secret-pass")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("users file: %v, mode %v", err, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(s.Path())
	if strings.Contains(string(b), "secret-pass") || !strings.Contains(string(b), "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("the file holds the password or no argon2id hash:\n%s", b)
	}
	// Another Store on the same folder, as a running server and the
	// command line are.
	srv := Open(dir)
	roles, err := srv.Authenticate("op", []byte("secret-pass"))
	if err != nil || len(roles) != 1 || roles[0] != Operator {
		t.Fatalf("login: %v, %v", roles, err)
	}
	for _, bad := range []struct{ name, pass string }{{"op", "wrong-pass"}, {"nobody", "secret-pass"}, {"op", ""}} {
		if _, err := srv.Authenticate(bad.name, []byte(bad.pass)); !errors.Is(err, ErrDenied) {
			t.Fatalf("%q/%q: %v, want ErrDenied", bad.name, bad.pass, err)
		}
	}
	if err := s.Passwd("op", []byte("other-pass")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a new mtime on coarse file systems
	if _, err := srv.Authenticate("op", []byte("secret-pass")); !errors.Is(err, ErrDenied) {
		t.Fatalf("old password after passwd: %v", err)
	}
	if _, err := srv.Authenticate("op", []byte("other-pass")); err != nil {
		t.Fatalf("new password: %v", err)
	}
	if err := s.Add("op", []string{Observer}, []byte("whatever-pass")); err == nil {
		t.Fatal("added a user twice")
	}
	for _, bad := range []struct {
		name  string
		roles []string
		pass  string
		want  string
	}{
		{"", []string{Observer}, "longenough", "user name"},
		{"a b", []string{Observer}, "longenough", "user name"},
		{"x", nil, "longenough", "no role"},
		{"x", []string{"Root"}, "longenough", `unknown role "Root"`},
		{"x", []string{Observer}, "short", "shorter than 8"},
	} {
		if err := s.Add(bad.name, bad.roles, []byte(bad.pass)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("Add(%q, %v): %v, want an error naming %q", bad.name, bad.roles, err, bad.want)
		}
	}
	if err := s.Remove("op"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := srv.Authenticate("op", []byte("other-pass")); !errors.Is(err, ErrDenied) {
		t.Fatalf("removed user: %v", err)
	}
}

func TestBrokenFile(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	os.WriteFile(s.Path(), []byte(`{"users":[{"name":"x","roles":["God"],"hash":"h"}]}`), 0o600)
	if _, err := s.Authenticate("x", []byte("password")); err == nil || !strings.Contains(err.Error(), `unknown role "God"`) {
		t.Fatalf("a bad file: %v", err)
	}
}
