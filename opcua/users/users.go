// Package users keeps an OPC UA server's user accounts: names, roles and
// argon2id password hashes in one file of the data folder (users.json,
// mode 0600, replaced atomically). The file is read again when it
// changes, so that `edged user ...` counts at the next ActivateSession of
// a running server. No password is kept or logged in clear.
package users

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/edged/edged/internal/atomicfile"
)

// FileName is the accounts file in the data folder.
const FileName = "users.json"

// The roles of OPC 10000-18 that edged grants (its well-known roles).
const (
	Anonymous         = "Anonymous"
	AuthenticatedUser = "AuthenticatedUser"
	Observer          = "Observer"
	Operator          = "Operator"
	Engineer          = "Engineer"
	Supervisor        = "Supervisor"
	ConfigureAdmin    = "ConfigureAdmin"
	SecurityAdmin     = "SecurityAdmin"
	// Auditor, edged's own role, observes and receives the audit events.
	Auditor = "Auditor"
)

// Roles lists the roles a user may be given.
var Roles = []string{Observer, Operator, Engineer, Supervisor, ConfigureAdmin, SecurityAdmin, Auditor}

// The argon2id parameters of new hashes (OWASP's first recommendation:
// 19 MiB, 2 passes, 1 lane); the hash records them, so that they may
// change without invalidating older hashes.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16

	// MaxPasswordLength bounds a password, as a decoded token carries it.
	MaxPasswordLength = 1024
)

// User is one account.
type User struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
	Hash  string   `json:"hash"` // $argon2id$v=19$m=...,t=...,p=...$salt$key
}

type file struct {
	Users []User `json:"users"`
}

// Store is the accounts file of a data folder. Safe for concurrent use.
type Store struct {
	path string

	mu    sync.Mutex
	users []User
	stamp string
	err   error // of the last read

	// verifying bounds the argon2id computations running at once: each
	// takes 19 MiB, and a flood of logins must not take the gateway's
	// memory.
	verifying chan struct{}
}

// Open returns the store of the data folder dir; the file need not
// exist yet.
func Open(dir string) *Store {
	return &Store{path: filepath.Join(dir, FileName), verifying: make(chan struct{}, 2)}
}

// Path is the accounts file.
func (s *Store) Path() string { return s.path }

// ErrDenied is every failed login: unknown user or wrong password alike.
var ErrDenied = errors.New("users: unknown user or wrong password")

// load reads the file when it changed.
func (s *Store) load() ([]User, error) {
	fi, err := os.Stat(s.path)
	stamp := ""
	if err == nil {
		stamp = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if stamp == s.stamp && (s.users != nil || s.err != nil || stamp == "") {
		return s.users, s.err
	}
	s.stamp, s.users, s.err = stamp, nil, nil
	if stamp == "" {
		return nil, nil
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		s.err = err
		return nil, err
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		s.err = fmt.Errorf("%s: %w", s.path, err)
		return nil, s.err
	}
	for i, u := range f.Users {
		if err := checkUser(u.Name, u.Roles); err != nil {
			s.err = fmt.Errorf("%s: user %d: %w", s.path, i+1, err)
			return nil, s.err
		}
	}
	s.users = f.Users
	return s.users, nil
}

// List returns the accounts.
func (s *Store) List() ([]User, error) {
	u, err := s.load()
	return slices.Clone(u), err
}

// dummy is the hash an unknown user's password is checked against, so
// that a wrong name costs as long as a wrong password.
var dummy = sync.OnceValue(func() string { return mustHash("not a password of anyone") })

// Authenticate checks name and password and returns the user's roles.
// Every failure is ErrDenied (or the error of reading the file).
func (s *Store) Authenticate(name string, password []byte) ([]string, error) {
	users, err := s.load()
	if err != nil {
		return nil, err
	}
	hash, roles := dummy(), []string(nil)
	for _, u := range users {
		if u.Name == name {
			hash, roles = u.Hash, u.Roles
		}
	}
	s.verifying <- struct{}{}
	ok := verify(hash, password)
	<-s.verifying
	if !ok || roles == nil {
		return nil, ErrDenied
	}
	return slices.Clone(roles), nil
}

// Roles returns the roles of the user name, or nil when there is none
// (for a holder of a trusted user certificate, named by its subject's
// common name).
func (s *Store) Roles(name string) []string {
	users, err := s.load()
	if err != nil {
		return nil
	}
	for _, u := range users {
		if u.Name == name {
			return slices.Clone(u.Roles)
		}
	}
	return nil
}

// Add adds a user, Passwd changes a password, Remove removes a user;
// each writes the file atomically.
func (s *Store) Add(name string, roles []string, password []byte) error {
	if err := checkUser(name, roles); err != nil {
		return err
	}
	if err := CheckPassword(password); err != nil {
		return err
	}
	return s.update(func(us []User) ([]User, error) {
		for _, u := range us {
			if u.Name == name {
				return nil, fmt.Errorf("user %q exists (edged user passwd changes the password)", name)
			}
		}
		h, err := hash(password)
		if err != nil {
			return nil, err
		}
		return append(us, User{Name: name, Roles: roles, Hash: h}), nil
	})
}

// Passwd sets a user's password.
func (s *Store) Passwd(name string, password []byte) error {
	if err := CheckPassword(password); err != nil {
		return err
	}
	return s.update(func(us []User) ([]User, error) {
		for i, u := range us {
			if u.Name == name {
				h, err := hash(password)
				if err != nil {
					return nil, err
				}
				us[i].Hash = h
				return us, nil
			}
		}
		return nil, fmt.Errorf("no user %q", name)
	})
}

// Remove removes a user.
func (s *Store) Remove(name string) error {
	return s.update(func(us []User) ([]User, error) {
		for i, u := range us {
			if u.Name == name {
				return slices.Delete(us, i, i+1), nil
			}
		}
		return nil, fmt.Errorf("no user %q", name)
	})
}

func (s *Store) update(f func([]User) ([]User, error)) error {
	us, err := s.load()
	if err != nil {
		return err
	}
	us, err = f(slices.Clone(us))
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(file{Users: us}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(s.path, append(b, '\n'), 0o600)
}

func checkUser(name string, roles []string) error {
	if name == "" || len(name) > 64 || !utf8.ValidString(name) || strings.ContainsAny(name, " \t\r\n") {
		return fmt.Errorf("user name %q: want 1 to 64 characters without spaces", name)
	}
	if len(roles) == 0 {
		return fmt.Errorf("user %q: no role (want one or more of %s)", name, strings.Join(Roles, ", "))
	}
	for _, r := range roles {
		if !slices.Contains(Roles, r) {
			return fmt.Errorf("user %q: unknown role %q (want %s)", name, r, strings.Join(Roles, ", "))
		}
	}
	return nil
}

// CheckPassword refuses empty and overlong passwords.
func CheckPassword(p []byte) error {
	if len(p) < 8 {
		return errors.New("the password is shorter than 8 characters")
	}
	if len(p) > MaxPasswordLength {
		return fmt.Errorf("the password is longer than %d bytes", MaxPasswordLength)
	}
	return nil
}

var b64 = base64.RawStdEncoding

func hash(password []byte) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey(password, salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

func mustHash(p string) string {
	h, err := hash([]byte(p))
	if err != nil {
		panic(err)
	}
	return h
}

// verify checks password against an encoded argon2id hash, in constant
// time over the key.
func verify(encoded string, password []byte) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var v int
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 256*1024 || t == 0 || t > 16 || p == 0 {
		return false
	}
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(key) == 0 || len(key) > 64 {
		return false
	}
	got := argon2.IDKey(password, salt, t, m, p, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1
}
