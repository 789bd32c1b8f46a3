package configsvc

// The store keeps the versions of the gateway's configuration in the data
// folder, so that they survive a power cut: each version is one file,
// written to a temporary file, synced, renamed and the folder synced,
// with its metadata and the SHA-256 of its document. The newest Keep
// versions stay. Open loads the newest intact version and says which
// damaged ones it passed over. Every change is also a line of a bounded,
// rotated audit log. The store knows documents as bytes.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edged/edged/internal/atomicfile"
)

// Keep is how many versions the store keeps.
const Keep = 20

// MaxDocument bounds a configuration document.
const MaxDocument = 16 << 20

// States of a version.
const (
	// StateApplied: in effect, nothing more to do.
	StateApplied = "applied"
	// StatePending: in effect until its ConfirmBy, when it is reverted
	// unless confirmed.
	StatePending = "pending"
	// StateConfirmed: a pending version that was confirmed.
	StateConfirmed = "confirmed"
	// StateReverted: a pending version that was not confirmed in time;
	// a newer version restored the one before it.
	StateReverted = "reverted"
)

// Meta is what the store knows of a version beside its document.
type Meta struct {
	Version   uint32    `json:"version"`
	Time      time.Time `json:"time"`
	User      string    `json:"user"`             // who applied it
	Client    string    `json:"client,omitempty"` // the client certificate's thumbprint, or the source ("command line")
	Comment   string    `json:"comment,omitempty"`
	Summary   string    `json:"summary"`
	State     string    `json:"state"`
	ConfirmBy time.Time `json:"confirm_by,omitzero"`
}

// record is a version file.
type record struct {
	Meta
	SHA256   string          `json:"sha256"`
	Document json.RawMessage `json:"document"`
}

// Store is the versions in one folder. Its methods are safe for
// concurrent use; two processes must not write one folder at once.
type Store struct {
	dir   string
	audit *Audit
	lock  *os.File // the writer's lock (Lock); nil: not held
	mu    sync.Mutex
	// The versions on disk, oldest first (damaged ones left out). Their
	// documents stay on disk and are read when asked for: a gateway's
	// configuration may take megabytes, Keep times over.
	metas []Meta
	// Damaged lists what Open passed over, for the caller to say.
	damaged []string
}

// ErrEmpty is Current's error when the store holds no version.
var ErrEmpty = errors.New("configsvc: no configuration version stored")

// Open reads the versions in dir (created if needed, 0700): each file
// vNNNNNNNNNN.json whose checksum and metadata hold. Damaged files are
// left where they are (renamed *.damaged) and listed by Damaged;
// temporary files of a write cut short are removed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &Store{dir: dir, audit: NewAudit(dir)}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp"):
			os.Remove(filepath.Join(dir, name)) // a write cut short
			continue
		case !strings.HasPrefix(name, "v") || !strings.HasSuffix(name, ".json"):
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, "v"), ".json"), 10, 32)
		if err != nil {
			continue
		}
		rec, err := readRecord(filepath.Join(dir, name))
		if err == nil && rec.Version != uint32(n) {
			err = fmt.Errorf("it says it is version %d", rec.Version)
		}
		if err != nil {
			s.damaged = append(s.damaged, fmt.Sprintf("%s: %v", name, err))
			os.Rename(filepath.Join(dir, name), filepath.Join(dir, name+".damaged"))
			continue
		}
		s.metas = append(s.metas, rec.Meta)
	}
	slices.SortFunc(s.metas, func(a, b Meta) int { return int(int64(a.Version) - int64(b.Version)) })
	return s, nil
}

// Audit is the store's audit log.
func (s *Store) Audit() *Audit { return s.audit }

// readRecord reads and checks one version file.
func readRecord(path string) (*record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("not a version record: %v", err)
	}
	sum := sha256.Sum256(rec.Document)
	if rec.SHA256 != hex.EncodeToString(sum[:]) {
		return nil, errors.New("its document does not match its checksum")
	}
	if rec.Version == 0 {
		return nil, errors.New("version 0")
	}
	return &rec, nil
}

// Damaged returns what Open found damaged and passed over, one line each.
func (s *Store) Damaged() []string { return slices.Clone(s.damaged) }

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

// Current returns the newest version and its document, ErrEmpty if none.
// A version whose file no longer reads back intact is passed over as Open
// passes over it (Damaged lists it).
func (s *Store) Current() (Meta, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.metas) > 0 {
		m := s.metas[len(s.metas)-1]
		if doc, err := s.document(len(s.metas) - 1); err == nil {
			return m, doc, nil
		}
	}
	return Meta{}, nil, ErrEmpty
}

// Get returns version v, false if the store does not hold it (or its file
// no longer reads back intact: Damaged then lists it).
func (s *Store) Get(v uint32) (Meta, []byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.metas {
		if m.Version == v {
			doc, err := s.document(i)
			return m, doc, err == nil
		}
	}
	return Meta{}, nil, false
}

// document reads the document of s.metas[i] from its file. A file that
// does not read back intact is renamed *.damaged, listed by Damaged and
// left out.
func (s *Store) document(i int) ([]byte, error) {
	m := s.metas[i]
	path := s.path(m.Version)
	rec, err := readRecord(path)
	if err == nil && rec.Version != m.Version {
		err = fmt.Errorf("it says it is version %d", rec.Version)
	}
	if err != nil {
		s.damaged = append(s.damaged, fmt.Sprintf("%s: %v", filepath.Base(path), err))
		os.Rename(path, path+".damaged")
		s.metas = slices.Delete(s.metas, i, i+1)
		return nil, fmt.Errorf("cfgstore: version %d: %w", m.Version, err)
	}
	return rec.Document, nil
}

// History returns the metadata of the versions held, oldest first.
func (s *Store) History() []Meta {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.metas)
}

// Add stores doc as the next version with m's User, Client, Comment,
// Summary, State and ConfirmBy (Version and Time are filled in) and
// returns its metadata. It is on disk when Add returns; the oldest
// versions beyond Keep are removed.
func (s *Store) Add(m Meta, doc []byte) (Meta, error) {
	if len(doc) > MaxDocument {
		return Meta{}, fmt.Errorf("cfgstore: a document of %d bytes is over the %d bytes allowed", len(doc), MaxDocument)
	}
	if !json.Valid(doc) {
		return Meta{}, errors.New("cfgstore: the document is not JSON")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m.Version = 1
	if n := len(s.metas); n > 0 {
		m.Version = s.metas[n-1].Version + 1
	}
	if m.Time.IsZero() {
		m.Time = time.Now().UTC()
	}
	if m.State == "" {
		m.State = StateApplied
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil {
		return Meta{}, err
	}
	if err := s.write(m, compact.Bytes()); err != nil {
		return Meta{}, err
	}
	s.metas = append(s.metas, m)
	for len(s.metas) > Keep {
		os.Remove(s.path(s.metas[0].Version))
		s.metas = s.metas[1:]
	}
	return m, nil
}

// SetState changes the state of version v (and clears its ConfirmBy
// unless the state is pending), on disk first.
func (s *Store) SetState(v uint32, state string) (Meta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.metas {
		if s.metas[i].Version != v {
			continue
		}
		doc, err := s.document(i)
		if err != nil {
			return Meta{}, err
		}
		m := s.metas[i]
		m.State = state
		if state != StatePending {
			m.ConfirmBy = time.Time{}
		}
		if err := s.write(m, doc); err != nil {
			return Meta{}, err
		}
		s.metas[i] = m
		return m, nil
	}
	return Meta{}, fmt.Errorf("cfgstore: no version %d", v)
}

func (s *Store) path(v uint32) string {
	return filepath.Join(s.dir, fmt.Sprintf("v%010d.json", v))
}

// write stores the record of m and doc atomically.
func (s *Store) write(m Meta, doc []byte) error {
	sum := sha256.Sum256(doc)
	b, err := json.Marshal(record{Meta: m, SHA256: hex.EncodeToString(sum[:]), Document: doc})
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(s.path(m.Version), append(b, '\n'), 0o600)
}
