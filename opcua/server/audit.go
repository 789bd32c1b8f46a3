package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/server/internal/subs"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// Auditing (OPC 10000-5 §6.4, 10000-4 §6.5). With Config.Audit set the
// server raises an audit event for every CreateSession and
// ActivateSession (success or failure), every client certificate it
// rejects, every Write and every method call that changes something, and
// hands the same record to Config.Audit. Audit events go to the sessions
// allowed to receive them (mayAudit) only. Failures are rate limited (a
// flood of wrong passwords gives a bounded number of events, the next one
// counting those left out); no record carries a password or a secret.

// auditEvent is an audit event: a plainEvent that only sessions allowed
// to see audit events receive.
type auditEvent struct{ plainEvent }

// audit is what an audit event says.
type audit struct {
	typ     uint32        // the event type
	ok      bool          // the action succeeded (Status)
	code    ua.StatusCode // its result, for security events (StatusCodeId)
	source  string        // the service, as SourceName ("Session/ActivateSession")
	message string
	user    string    // the client's user (ClientUserId)
	entry   string    // the request's AuditEntryId (ClientAuditEntryId)
	session ua.NodeID // the session (SessionId), null before one exists
	channel uint32    // the secure channel (SecureChannelId), 0 for none
	remote  string    // the client's address, for the record
	node    ua.NodeID // SourceNode (default the Server object)
	// fields are the type's own fields, by browse path.
	fields map[string]ua.Variant
}

// auditLimiter paces failure events: auditBurst at once, then one every
// auditEvery; those beyond it are counted and reported by the next one.
type auditLimiter struct {
	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed uint64
}

const (
	auditBurst = 20
	auditEvery = time.Second
)

// take reports whether a failure event may go out at now, and how many
// were left out before it.
func (l *auditLimiter) take(now time.Time) (bool, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last.IsZero() {
		l.tokens = auditBurst
	} else if d := now.Sub(l.last); d > 0 {
		l.tokens = min(auditBurst, l.tokens+float64(d)/float64(auditEvery))
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		return false, 0
	}
	l.tokens--
	n := l.suppressed
	l.suppressed = 0
	return true, n
}

// auditing reports whether the server audits (Server/Auditing).
func (s *Server) auditing() bool { return s.cfg.Audit != nil }

// mayAudit reports whether a session with roles r receives audit events:
// the security administrators (OPC 10000-18 §4.2) and the auditors.
func mayAudit(r Roles) bool { return r.Has(RoleSecurityAdmin) || r.Has(RoleAuditor) }

// receives is the subscription manager's check of who gets an event.
func (s *Server) receives(ss subs.Session, ev events.Event) bool {
	if _, ok := ev.(*auditEvent); !ok {
		return true
	}
	sess, ok := ss.(*session)
	return ok && mayAudit(Roles(sess.roles.Load()))
}

// auditRecord is an audit event as Config.Audit gets it, one JSON object.
type auditRecord struct {
	Time       time.Time `json:"time"`
	Type       string    `json:"type"`
	Status     bool      `json:"status"`
	Code       string    `json:"statusCode,omitempty"`
	Source     string    `json:"source"`
	Node       string    `json:"node,omitempty"`
	User       string    `json:"user,omitempty"`
	Session    string    `json:"session,omitempty"`
	Channel    uint32    `json:"channel,omitempty"`
	Remote     string    `json:"remote,omitempty"`
	Message    string    `json:"message"`
	Suppressed uint64    `json:"suppressedBefore,omitempty"`
}

// raiseAudit raises the audit event a describes, to the Server object's
// notifier and notifiers, and records it.
func (s *Server) raiseAudit(a *audit, notifiers ...ua.NodeID) {
	if !s.auditing() {
		return
	}
	now := s.clock()
	var left uint64
	if !a.ok {
		ok, n := s.auditLimit.take(now)
		if !ok {
			return
		}
		left = n
	}
	msg := a.message
	if left > 0 {
		msg = fmt.Sprintf("%s (%d failures before this one not reported: over %d in a burst)", msg, left, auditBurst)
	}
	typ := ua.NewNumericNodeID(0, a.typ)
	node := a.node
	if node.IsNull() {
		node = ua.NewNumericNodeID(0, id.Server)
	}
	ev := &auditEvent{plainEvent{typ: typ, fields: make(map[events.Field]*ua.Variant, 16+len(a.fields))}}
	set := func(path string, v ua.Variant) { ev.fields[s.events.FieldOf(path)] = &v }
	eid := make([]byte, 16)
	rand.Read(eid)
	set("EventId", ua.MustVariant(eid))
	set("EventType", ua.MustVariant(typ))
	set("SourceNode", ua.MustVariant(node))
	set("SourceName", ua.MustVariant(a.source))
	set("Time", ua.MustVariant(now))
	set("ReceiveTime", ua.MustVariant(now))
	set("Message", ua.MustVariant(ua.LocalizedText{Text: msg}))
	sev := uint16(100)
	if !a.ok {
		sev = 500
	}
	set("Severity", ua.MustVariant(sev))
	set("ActionTimeStamp", ua.MustVariant(now))
	set("Status", ua.MustVariant(a.ok))
	set("ServerId", ua.MustVariant(s.cfg.ApplicationURI))
	set("ClientAuditEntryId", ua.MustVariant(a.entry))
	set("ClientUserId", ua.MustVariant(a.user))
	if s.events.Subtype(typ, ua.NewNumericNodeID(0, id.AuditSecurityEventType)) {
		set("StatusCodeId", ua.MustVariant(a.code))
	}
	if !a.session.IsNull() {
		set("SessionId", ua.MustVariant(a.session))
	}
	if a.channel != 0 && (a.typ == id.AuditCreateSessionEventType || a.typ == id.AuditActivateSessionEventType) {
		set("SecureChannelId", ua.MustVariant(fmt.Sprint(a.channel)))
	}
	for p, v := range a.fields {
		set(p, v)
	}
	s.PostEvent(ev, notifiers...)

	rec := auditRecord{Time: now.UTC(), Type: s.events.Name(typ), Status: a.ok, Source: a.source,
		User: a.user, Channel: a.channel, Remote: a.remote, Message: msg, Suppressed: left}
	if a.code != status.Good || !a.ok {
		rec.Code = a.code.Name()
	}
	if !a.node.IsNull() {
		rec.Node = a.node.String()
	}
	if !a.session.IsNull() {
		rec.Session = a.session.String()
	}
	if b, err := json.Marshal(rec); err == nil {
		s.cfg.Audit(b)
	}
}

// auditOf starts the audit of a request on connection c by session s
// (nil before one).
func (c *conn) auditOf(typ uint32, s *session, source string, ok bool, code ua.StatusCode) *audit {
	a := &audit{typ: typ, ok: ok, code: code, source: source, channel: c.ch.ID(), remote: c.remote}
	if s != nil {
		a.session = s.id
		s.mu.Lock()
		a.user = auditUser(s.identity)
		s.mu.Unlock()
	}
	return a
}

// auditUser is who an identity is, for ClientUserId.
func auditUser(id Identity) string {
	switch {
	case id.UserName != "":
		return id.UserName
	case id.Anonymous:
		return "anonymous"
	}
	return ""
}

// auditToken is a user identity token without its secrets, for
// AuditActivateSessionEventType's UserIdentityToken (OPC 10000-5 §6.4.7:
// the password is left out).
func auditToken(token ua.Body) ua.ExtensionObject {
	switch t := token.(type) {
	case *ua.UserNameIdentityToken:
		return ua.ExtensionObject{Body: &ua.UserNameIdentityToken{PolicyID: t.PolicyID, UserName: t.UserName}}
	case *ua.X509IdentityToken:
		return ua.ExtensionObject{Body: &ua.X509IdentityToken{PolicyID: t.PolicyID, CertificateData: t.CertificateData}}
	case *ua.IssuedIdentityToken:
		return ua.ExtensionObject{Body: &ua.IssuedIdentityToken{PolicyID: t.PolicyID}}
	case *ua.AnonymousIdentityToken:
		return ua.ExtensionObject{Body: &ua.AnonymousIdentityToken{PolicyID: t.PolicyID}}
	}
	return ua.ExtensionObject{}
}

// certificateAudit is the AuditCertificate…EventType of a certificate
// check's failure code.
func certificateAudit(code ua.StatusCode) uint32 {
	switch code {
	case status.BadCertificateUntrusted, status.BadCertificateChainIncomplete, status.BadCertificateIssuerRevocationUnknown,
		status.BadCertificateRevocationUnknown:
		return id.AuditCertificateUntrustedEventType
	case status.BadCertificateTimeInvalid, status.BadCertificateIssuerTimeInvalid:
		return id.AuditCertificateExpiredEventType
	case status.BadCertificateRevoked, status.BadCertificateIssuerRevoked:
		return id.AuditCertificateRevokedEventType
	case status.BadCertificateURIInvalid, status.BadCertificateHostNameInvalid:
		return id.AuditCertificateMismatchEventType
	}
	return id.AuditCertificateInvalidEventType
}

// auditedCheck wraps a certificate check: each rejection raises the
// AuditCertificate event of its cause, with the certificate.
func (s *Server) auditedCheck(check uasc.CertificateCheck, source string) uasc.CertificateCheck {
	if check == nil {
		return nil
	}
	return func(leaf *x509.Certificate, chain []*x509.Certificate) error {
		err := check(leaf, chain)
		if err != nil {
			code := statusOf(err)
			if code == status.BadInternalError {
				code = status.BadCertificateInvalid
			}
			s.raiseAudit(&audit{typ: certificateAudit(code), code: code, source: source,
				message: fmt.Sprintf("certificate %q (thumbprint %x) rejected: %s", leaf.Subject.CommonName, secpol.Thumbprint(leaf.Raw), code.Name()),
				fields:  map[string]ua.Variant{"Certificate": ua.MustVariant(leaf.Raw)}})
		}
		return err
	}
}

// conditionAudits are the audit event types of the condition methods
// (OPC 10000-9 §5.10); other method calls raise AuditUpdateMethodEventType.
var conditionAudits = map[uint32]uint32{
	id.AcknowledgeableConditionType_Acknowledge:                                            id.AuditConditionAcknowledgeEventType,
	id.AcknowledgeableConditionType_Confirm:                                                id.AuditConditionConfirmEventType,
	id.ConditionType_AddComment:                                                            id.AuditConditionCommentEventType,
	id.ConditionType_Enable:                                                                id.AuditConditionEnableEventType,
	id.ConditionType_Disable:                                                               id.AuditConditionEnableEventType,
	id.ShelvedStateMachineType_TimedShelve:                                                 id.AuditConditionShelvingEventType,
	id.ShelvedStateMachineType_OneShotShelve:                                               id.AuditConditionShelvingEventType,
	id.ShelvedStateMachineType_Unshelve:                                                    id.AuditConditionShelvingEventType,
	id.AlarmConditionType_ShelvingState_TimedShelve:                                        id.AuditConditionShelvingEventType,
	id.AlarmConditionType_ShelvingState_OneShotShelve:                                      id.AuditConditionShelvingEventType,
	id.AlarmConditionType_ShelvingState_Unshelve:                                           id.AuditConditionShelvingEventType,
	id.ConditionType_ConditionRefresh:                                                      0, // reads: not audited
	id.ConditionType_ConditionRefresh2:                                                     0,
	id.Server_GetMonitoredItems:                                                            0,
	id.Server_ResendData:                                                                   0,
	id.ServerConfiguration_GetRejectedList:                                                 0,
	id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Read:        0,
	id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_GetPosition: 0,
	id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_Read:          0,
	id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_GetPosition:   0,
}

// auditCall raises the audit event of method call m by session s, which
// ended with r. The arguments are copied: the request's may be reused.
func (srv *Server) auditCall(s *session, m *ua.CallMethodRequest, r *ua.CallMethodResult) {
	typ := uint32(id.AuditUpdateMethodEventType)
	if m.MethodID.Namespace == 0 && m.MethodID.Type == ua.IDNumeric {
		if t, ok := conditionAudits[m.MethodID.Numeric]; ok {
			if t == 0 {
				return
			}
			typ = t
		}
	}
	ok := r.StatusCode.IsGood()
	a := &audit{typ: typ, ok: ok, code: r.StatusCode, source: "Method/Call", node: m.ObjectID, session: s.id,
		channel: s.channelID.Load(), message: fmt.Sprintf("method %v called on %v: %s", m.MethodID, m.ObjectID, r.StatusCode.Name())}
	s.mu.Lock()
	a.user = auditUser(s.identity)
	s.mu.Unlock()
	in := cloneVariants(m.InputArguments)
	a.fields = map[string]ua.Variant{
		"MethodId":        ua.MustVariant(m.MethodID),
		"InputArguments":  ua.MustVariant(in),
		"OutputArguments": ua.MustVariant(cloneVariants(r.OutputArguments)),
		"Status":          ua.MustVariant(ok),
	}
	switch typ {
	case id.AuditConditionAcknowledgeEventType, id.AuditConditionConfirmEventType, id.AuditConditionCommentEventType:
		if len(in) == 2 {
			a.fields["ConditionEventId"] = in[0]
			a.fields["Comment"] = in[1]
		}
	case id.AuditConditionShelvingEventType:
		if len(in) == 1 {
			a.fields["ShelvingTime"] = in[0]
		}
	}
	srv.raiseAudit(a, srv.notifiersOf(m.ObjectID)...)
}

// auditWrites raises the AuditWriteUpdateEventType of each write of ws
// by session s, which ended with results.
func (srv *Server) auditWrites(s *session, ws []ua.WriteValue, results []ua.StatusCode) {
	if !srv.auditing() {
		return
	}
	for i := range ws {
		srv.auditWrite(s, &ws[i], results[i])
	}
}

// cloneWrites deep-copies ws, through their encoding.
func cloneWrites(ws []ua.WriteValue) []ua.WriteValue {
	d := ua.NewDecoder(ua.AppendMessage(nil, &ua.WriteRequest{NodesToWrite: ws}))
	var cp ua.WriteRequest
	if err := ua.DecodeMessageInto(d, &cp); err != nil || len(cp.NodesToWrite) != len(ws) {
		return nil
	}
	return cp.NodesToWrite
}

// auditWrite raises the AuditWriteUpdateEventType of write w by session
// s, which ended with code. The value is copied: the request's may be
// reused.
func (srv *Server) auditWrite(s *session, w *ua.WriteValue, code ua.StatusCode) {
	a := &audit{typ: id.AuditWriteUpdateEventType, ok: code.IsGood(), code: code, source: "Attribute/Write", node: w.NodeID,
		session: s.id, channel: s.channelID.Load(), message: fmt.Sprintf("%v written: %s", w.NodeID, code.Name())}
	s.mu.Lock()
	a.user = auditUser(s.identity)
	s.mu.Unlock()
	a.fields = map[string]ua.Variant{
		"AttributeId": ua.MustVariant(w.AttributeID),
		"IndexRange":  ua.MustVariant(w.IndexRange),
		"NewValue":    cloneVariants([]ua.Variant{w.Value.Value})[0],
	}
	srv.raiseAudit(a)
}

// maxAuditArgument is the largest argument an audit event carries; a
// larger one (a file's contents) is named by its size and hash.
const maxAuditArgument = 1024

// cloneVariants deep-copies vs, through their encoding, each argument
// beyond maxAuditArgument bytes replaced by a String of its size and
// SHA-256.
func cloneVariants(vs []ua.Variant) []ua.Variant {
	out := make([]ua.Variant, len(vs))
	for i := range vs {
		if enc := vs[i].Encode(nil); len(enc) > maxAuditArgument {
			out[i] = ua.MustVariant(fmt.Sprintf("(%d bytes, SHA-256 %x)", len(enc), sha256.Sum256(enc)))
			continue
		}
		out[i] = cloneVariant(&vs[i])
	}
	return out
}

// cloneVariant deep-copies v, through its encoding.
func cloneVariant(v *ua.Variant) ua.Variant {
	d := ua.NewDecoder(v.Encode(nil))
	var out ua.Variant
	out.Decode(d)
	if d.Err() != nil {
		return ua.Variant{}
	}
	return out
}

// notifiersOf returns the notifiers an event about node n goes to besides
// the Server object: n and the nodes above it (up its inverse
// HasComponent, HasEventSource and HasNotifier references, a few levels)
// whose EventNotifier subscribes to events.
func (s *Server) notifiersOf(n ua.NodeID) []ua.NodeID {
	var out []ua.NodeID
	seen := map[ua.NodeID]bool{}
	level := []ua.NodeID{n}
	for depth := 0; depth < 4 && len(level) > 0; depth++ {
		var up []ua.NodeID
		for _, x := range level {
			if seen[x] {
				continue
			}
			seen[x] = true
			if node := s.as.Node(x); node != nil && node.EventNotifier&1 != 0 {
				out = append(out, x)
			}
			for _, r := range s.as.References(x) {
				if !r.IsInverse || r.TypeID.Namespace != 0 || r.Target.ServerIndex != 0 {
					continue
				}
				switch r.TypeID.Numeric {
				case id.HasComponent, id.HasEventSource, id.HasNotifier:
					up = append(up, r.Target.NodeID)
				}
			}
		}
		level = up
	}
	return out
}
