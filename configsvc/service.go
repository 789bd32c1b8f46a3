// Package configsvc is the gateway's live configuration service: the
// versions of the configuration document in the data folder (safe across
// a power cut) with their audit log, Objects/Configuration (the document
// as a file, and the methods that validate, apply, confirm, roll back and
// list versions of it), the confirm-or-revert timer, and the control
// socket through which `edged config` reaches a running edged. It applies
// a document through a Target, which the stack implements; what a
// document means is package plc/config's. See docs/configuration.md.
package configsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
)

// NamespaceURI is the namespace of Objects/Configuration.
const NamespaceURI = "urn:edged:configuration"

// MaxTags bounds the tags of a configuration applied over OPC UA.
const MaxTags = 10000

// The roles of the configuration service: who may read and validate,
// and who may change (over SignAndEncrypt only).
var (
	configReaders  = server.RolesOf(server.RoleEngineer, server.RoleSupervisor, server.RoleConfigureAdmin)
	configChangers = server.RolesOf(server.RoleConfigureAdmin)
)

// Target is what a configuration changes: the running devices and tags
// (the stack).
type Target interface {
	// Check tells whether c, valid as a document, can run beside what
	// runs (names the address space already holds otherwise, say).
	Check(c *config.Config) error
	// Apply puts c into effect, live. It may change Modbus addresses in
	// c (the simulator's), which are then stored as the caller gave them.
	// plc.ErrPeriodChange: a base cycle change, which takes a restart.
	Apply(ctx context.Context, c *config.Config) error
}

// Options configure the service.
type Options struct {
	// Store holds the versions and the audit log; its current version is
	// what runs.
	Store *Store
	// Target is what a version applies to.
	Target Target
	// Logger logs changes and reverts (nil: none).
	Logger *slog.Logger
	// HeavyWork, when set, is called as a change's work starts (parsing,
	// validating, making drivers and nodes: tens of milliseconds); the
	// function it returns is called as it ends. The process's runtime
	// policy decides what it does.
	HeavyWork func() (done func())
}

// Service is the configuration service; see the package doc.
type Service struct {
	as   *addrspace.Space
	opts Options
	ns   uint16

	mu      sync.Mutex // serializes changes
	pending *pendingVersion
	files   server.FileHandles
	closed  bool
}

// pendingVersion is an applied version that waits for Confirm.
type pendingVersion struct {
	version, prev uint32
	timer         *time.Timer
	within        time.Duration
}

// maxConfigFiles bounds the open handles of ConfigurationFile.
const maxConfigFiles = 8

// Object returns the NodeId of Objects/Configuration.
func (s *Service) Object() ua.NodeID { return s.nid("Configuration") }

// New adds Objects/Configuration to as, served by the returned service.
func New(as *addrspace.Space, o Options) (*Service, error) {
	s := &Service{as: as, opts: o, files: server.FileHandles{Max: maxConfigFiles, MaxSize: MaxDocument}}
	s.ns = as.AddNamespace(NamespaceURI)
	obj := s.nid("Configuration")
	if err := as.AddNode(&addrspace.Node{
		ID:          obj,
		Class:       ua.NodeClassObject,
		BrowseName:  ua.QualifiedName{NamespaceIndex: s.ns, Name: "Configuration"},
		Description: text("The gateway's device and tag configuration: its document, versions and the methods that change it"),
		// It notifies the audit events of its methods' calls (the
		// server raises them), and the Server notifies all it does.
		EventNotifier: 1,
	},
		ref(id.Organizes, true, ua.NewNumericNodeID(0, id.ObjectsFolder)),
		ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.BaseObjectType)),
		ref(id.HasNotifier, true, ua.NewNumericNodeID(0, id.Server)),
	); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		name string
		dt   uint32
		v    ua.Variant
	}{
		{"CurrentVersion", id.UInt32, ua.MustVariant(uint32(0))},
		{"LastUpdateTime", id.UtcTime, ua.MustVariant(time.Time{})},
		{"LastUpdatedBy", id.String, ua.MustVariant("")},
		{"PendingVersion", id.UInt32, ua.MustVariant(uint32(0))},
	} {
		if err := s.as.AddProperty(obj, s.nid("Configuration."+p.name), ua.QualifiedName{NamespaceIndex: s.ns, Name: p.name}, p.dt, p.v); err != nil {
			return nil, err
		}
	}
	if err := s.addFile(obj); err != nil {
		return nil, err
	}
	if err := s.addMethods(obj); err != nil {
		return nil, err
	}
	s.publish()
	return s, nil
}

func (s *Service) nid(name string) ua.NodeID { return ua.NewStringNodeID(s.ns, name) }

// Namespace returns the index of NamespaceURI.
func (s *Service) Namespace() uint16 { return s.ns }

// Close stops the confirmation timer; a pending version stays pending
// (the next start reverts it).
func (s *Service) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.pending != nil {
		s.pending.timer.Stop()
	}
}

// publish shows the current version in the properties; called with mu
// held or before the service is in use.
func (s *Service) publish() {
	m, doc, err := s.opts.Store.Current()
	if err != nil {
		return
	}
	s.as.SetValue(s.nid("Configuration.CurrentVersion"), ua.MustVariant(m.Version))
	s.as.SetValue(s.nid("Configuration.LastUpdateTime"), ua.MustVariant(m.Time))
	s.as.SetValue(s.nid("Configuration.LastUpdatedBy"), ua.MustVariant(m.User))
	var pv uint32
	if s.pending != nil {
		pv = s.pending.version
	}
	s.as.SetValue(s.nid("Configuration.PendingVersion"), ua.MustVariant(pv))
	s.as.SetValue(s.nid("ConfigurationFile.Size"), ua.MustVariant(uint64(len(pretty(doc)))))
	s.as.SetValue(s.nid("ConfigurationFile.OpenCount"), ua.MustVariant(uint16(s.files.Count())))
}

// pretty is doc indented, as the file serves it.
func pretty(doc []byte) []byte {
	var b bytes.Buffer
	if json.Indent(&b, doc, "", "  ") != nil {
		return doc
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// caller returns the caller when it has one of roles and, for changes,
// a SignAndEncrypt channel.
func caller(ctx context.Context, roles server.Roles, change bool) (server.Caller, ua.StatusCode) {
	c, ok := server.CallerFrom(ctx)
	if !ok || c.Roles&roles == 0 {
		return c, status.BadUserAccessDenied
	}
	if change && c.Mode != ua.MessageSecurityModeSignAndEncrypt {
		return c, status.BadSecurityModeInsufficient
	}
	return c, status.Good
}

func who(c server.Caller) string {
	if c.UserName == "" {
		return "anonymous"
	}
	return c.UserName
}

// Parse reads a configuration document as --config does (strict: unknown
// fields are problems) and checks it as a whole: config.Validate, the
// binding's Check and the limits of the service. It returns the
// configuration and every problem, as "path: message".
func (s *Service) Parse(doc []byte) (*config.Config, []string) {
	if len(doc) > MaxDocument {
		return nil, []string{fmt.Sprintf("document: %d bytes is over the %d bytes allowed", len(doc), MaxDocument)}
	}
	c, err := config.Parse(doc)
	var ve *config.ValidationError
	switch {
	case errors.As(err, &ve):
		var out []string
		for _, p := range ve.Problems {
			out = append(out, p.String())
		}
		return nil, out
	case err != nil:
		return nil, []string{err.Error()}
	}
	n := 0
	for _, d := range c.Devices {
		n += len(d.Tags)
	}
	if n > MaxTags {
		return nil, []string{fmt.Sprintf("devices: %d tags is over the %d allowed", n, MaxTags)}
	}
	if err := s.opts.Target.Check(c); err != nil {
		return nil, []string{err.Error()}
	}
	return c, nil
}

// change applies doc as the next version, on behalf of c, if the current
// version is expected (0: any). It returns the new version, or the
// problems that kept it from being applied (nothing changed then).
// mu is held.
func (s *Service) change(ctx context.Context, c server.Caller, doc []byte, expected uint32, within time.Duration, comment, action string) (v uint32, problems []string) {
	// The work of a change (parsing, validating, making drivers and
	// nodes) runs on a thread of its own at the lowest priority, so that
	// the scan and the sessions keep their cores; the thread ends with it.
	// It is heavy work for the runtime policy: with one P that thread
	// would hold the P while it computes, and the scan's wake-up would
	// wait until the runtime preempts it; with a P to spare the kernel,
	// which knows the thread's priority, gives the core to the scan first.
	if s.opts.HeavyWork != nil {
		defer s.opts.HeavyWork()()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread goes with the goroutine
		lowerThreadPriority()
		v, problems = s.doChange(ctx, c, doc, expected, within, comment, action)
	}()
	<-done
	return v, problems
}

func (s *Service) doChange(ctx context.Context, c server.Caller, doc []byte, expected uint32, within time.Duration, comment, action string) (uint32, []string) {
	cur, curDoc, err := s.opts.Store.Current()
	if err != nil {
		return 0, []string{"store: " + err.Error()}
	}
	if expected != 0 && expected != cur.Version {
		return 0, []string{fmt.Sprintf("expectedVersion: %d is not the current version %d (applied by %s at %s); nothing was changed: read the document again and apply on it",
			expected, cur.Version, cur.User, cur.Time.Format(time.RFC3339))}
	}
	if s.pending != nil && action != "rollback" {
		return 0, []string{fmt.Sprintf("version %d waits for Confirm (or Rollback) until %s; nothing was changed", s.pending.version, s.pendingDeadline().Format(time.RFC3339))}
	}
	next, problems := s.Parse(doc)
	if len(problems) > 0 {
		return 0, problems
	}
	// The current version is parsed again, not kept: with many tags it
	// takes megabytes.
	old, err := config.Parse(curDoc)
	if err != nil {
		return 0, []string{"the current version does not parse: " + err.Error()}
	}
	summary := config.Summarize(old, next)
	stored := bytes.Clone(doc)
	if err := s.opts.Target.Apply(ctx, next); err != nil {
		if errors.Is(err, plc.ErrPeriodChange) {
			return 0, []string{"base_cycle_ms: a change of the base cycle takes a restart (edged config apply then restart); nothing was changed"}
		}
		return 0, []string{"apply: " + err.Error()}
	}
	m := Meta{User: who(c), Client: c.ClientThumbprint, Comment: comment, Summary: summary}
	if within > 0 {
		m.State, m.ConfirmBy = StatePending, time.Now().Add(within).UTC()
	}
	meta, err := s.opts.Store.Add(m, stored)
	if err != nil {
		// Not stored: what runs must be what is stored.
		if back, perr := config.Parse(curDoc); perr == nil {
			s.opts.Target.Apply(context.WithoutCancel(ctx), back)
		}
		return 0, []string{"store: " + err.Error() + "; the previous version runs again"}
	}
	if s.pending != nil { // a rollback ends the wait
		s.pending.timer.Stop()
		s.opts.Store.SetState(s.pending.version, StateReverted)
		s.pending = nil
	}
	if within > 0 {
		p := &pendingVersion{version: meta.Version, prev: cur.Version, within: within}
		p.timer = time.AfterFunc(within, func() { s.revert(p) })
		s.pending = p
	}
	s.audit(c, action, meta.Version, summary)
	s.log("configuration changed", "version", meta.Version, "user", meta.User, "summary", summary)
	s.publish()
	return meta.Version, nil
}

// pendingDeadline is when the pending version is reverted; mu is held.
func (s *Service) pendingDeadline() time.Time {
	m, _, ok := s.opts.Store.Get(s.pending.version)
	if !ok {
		return time.Now()
	}
	return m.ConfirmBy
}

// revert puts the version before p back, if p still waits for Confirm.
func (s *Service) revert(p *pendingVersion) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != p || s.closed {
		return
	}
	s.pending = nil
	_, doc, ok := s.opts.Store.Get(p.prev)
	if !ok {
		s.log("cannot revert: the previous version is no longer stored", "version", p.version, "previous", p.prev)
		return
	}
	s.opts.Store.SetState(p.version, StateReverted)
	sys := server.Caller{UserName: "edged"}
	comment := fmt.Sprintf("reverted to version %d: version %d was not confirmed within %v", p.prev, p.version, p.within)
	v, problems := s.change(context.Background(), sys, doc, 0, 0, comment, "revert")
	if len(problems) > 0 {
		s.log("revert failed", "version", p.version, "problems", strings.Join(problems, "; "))
		return
	}
	s.log("configuration reverted: not confirmed in time", "version", p.version, "now", v)
}

// RevertPending reverts a version that was left pending by a previous run (its
// Confirm can no longer come): called at start with the store's current
// version when its state is pending.
func (s *Service) RevertPending(ctx context.Context) (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, _, err := s.opts.Store.Current()
	if err != nil || cur.State != StatePending {
		return 0, err
	}
	h := s.opts.Store.History()
	var prevDoc []byte
	var prev uint32
	for i := len(h) - 2; i >= 0; i-- {
		if h[i].State != StateReverted && h[i].State != StatePending {
			_, prevDoc, _ = s.opts.Store.Get(h[i].Version)
			prev = h[i].Version
			break
		}
	}
	if prevDoc == nil {
		_, err := s.opts.Store.SetState(cur.Version, StateConfirmed)
		return 0, err
	}
	s.opts.Store.SetState(cur.Version, StateReverted)
	comment := fmt.Sprintf("reverted to version %d at start: version %d was still waiting for Confirm", prev, cur.Version)
	v, problems := s.change(ctx, server.Caller{UserName: "edged"}, prevDoc, 0, 0, comment, "revert")
	if len(problems) > 0 {
		return 0, errors.New(strings.Join(problems, "; "))
	}
	return v, nil
}

// Apply is the method Apply for callers inside edged (the serial
// console, benchmarks): doc applied as user, on version expected (0:
// any).
func (s *Service) Apply(ctx context.Context, user string, doc []byte, expected uint32, confirmWithin time.Duration, comment string) (uint32, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.change(ctx, server.Caller{UserName: user}, doc, expected, confirmWithin, comment, "apply")
}

// ConsoleRollback is Rollback from the serial console (edged config
// rollback, through the control socket), as user "console".
func (s *Service) ConsoleRollback(ctx context.Context, v uint32) (uint32, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, doc, ok := s.opts.Store.Get(v)
	if !ok {
		return 0, []string{fmt.Sprintf("version %d is not stored (edged config history lists those that are)", v)}
	}
	return s.change(ctx, server.Caller{UserName: "console"}, doc, 0, 0, fmt.Sprintf("rollback to version %d (edged config rollback)", v), "rollback")
}

func (s *Service) audit(c server.Caller, action string, v uint32, summary string) {
	if err := s.opts.Store.Audit().Log(AuditEntry{User: who(c), Client: c.ClientThumbprint, Action: action, Version: v, Summary: summary}); err != nil {
		s.log("audit log", "err", err)
	}
}

func (s *Service) log(msg string, args ...any) {
	if s.opts.Logger != nil {
		s.opts.Logger.Warn(msg, args...)
	}
}
