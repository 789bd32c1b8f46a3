package server

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"math"
	"time"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// nonceLength is the length of the server nonces (OPC 10000-4 §5.7.2.2:
// at least 32 bytes).
const nonceLength = 32

// defaultMaxMessageSize is uasc's default MaxMessageSize, advertised as
// MaxRequestMessageSize when the channel configuration leaves it 0.
const defaultMaxMessageSize = 16 << 20

// reviseTimeout bounds a requested session timeout (milliseconds): 0,
// negative and NaN get the maximum.
func (s *Server) reviseTimeout(ms float64) time.Duration {
	if !(ms > 0) || math.IsInf(ms, 0) || ms >= float64(s.cfg.MaxSessionTimeout/time.Millisecond) {
		return s.cfg.MaxSessionTimeout
	}
	return max(time.Duration(ms*float64(time.Millisecond)), s.cfg.MinSessionTimeout)
}

func newNonce() []byte {
	b := make([]byte, nonceLength)
	rand.Read(b)
	return b
}

// createSession answers CreateSession (§5.7.2): a new session bound to
// this channel, not activated yet; audited.
func (c *conn) createSession(_ *session, req *ua.CreateSessionRequest, resp *ua.CreateSessionResponse) error {
	err := c.newSession(req, resp)
	if c.srv.auditing() {
		c.auditCreate(req, resp, err)
	}
	return err
}

// newSession creates the session of createSession.
func (c *conn) newSession(req *ua.CreateSessionRequest, resp *ua.CreateSessionResponse) error {
	if c.srv.isClosing() {
		c.srv.diag.rejectedSessions.Add(1)
		return status.BadShutdown
	}
	nonce := newNonce()
	sig, cert, err := c.checkCreateSecurity(req, nonce)
	if err != nil {
		c.srv.diag.securityRejectedSess.Add(1)
		c.srv.diag.rejectedSessions.Add(1)
		return err
	}
	timeout := c.srv.reviseTimeout(req.RequestedSessionTimeout)
	s, err := c.srv.sessions.create(req.SessionName, newClientKey(req), timeout, c.ch.ID(), c.now)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.nonce = nonce
	if cert != nil {
		s.clientCert = c.ch.PeerCertificate()
		s.clientNonce = bytes.Clone(req.ClientNonce)
	}
	s.mu.Unlock()
	maxReq := c.srv.cfg.Channel.MaxMessageSize
	if maxReq == 0 {
		maxReq = defaultMaxMessageSize
	}
	*resp = ua.CreateSessionResponse{
		ResponseHeader:        resp.ResponseHeader,
		SessionID:             s.id,
		AuthenticationToken:   s.token,
		RevisedSessionTimeout: float64(timeout / time.Millisecond),
		ServerNonce:           nonce,
		ServerCertificate:     cert,
		ServerSignature:       sig,
		ServerEndpoints:       c.srv.endpointList(),
		MaxRequestMessageSize: maxReq,
	}
	if p := c.ecdhRequested(&req.RequestHeader); p != nil && cert != nil {
		if resp.ResponseHeader.AdditionalHeader, err = c.ephemeralKeyHeader(s, p); err != nil {
			c.srv.sessions.remove(s)
			return err
		}
	}
	c.srv.cfg.Logger.Info("session created", "session", s.id.String(), "name", s.name, "timeout", timeout, "channel", c.ch.ID())
	return nil
}

// activateSession answers ActivateSession (§5.7.3). The first activation
// must come over the channel that created the session; a later one may
// come over another channel, which then takes the session over, as long
// as the user stays the same. The user identity token goes to the
// Authenticator; a rejection leaves the session as it was. The Publish
// requests the session queued over its old channel are dropped: the new
// channel's requests get the notifications. It is audited.
func (c *conn) activateSession(s *session, req *ua.ActivateSessionRequest, resp *ua.ActivateSessionResponse) error {
	err := c.activate(s, req, resp)
	if c.srv.auditing() {
		c.auditActivate(s, req, err)
	}
	return err
}

// activate activates the session of activateSession.
func (c *conn) activate(s *session, req *ua.ActivateSessionRequest, resp *ua.ActivateSessionResponse) error {
	chID := c.ch.ID()
	if !s.activated.Load() && s.channelID.Load() != chID {
		c.srv.diag.securityRejectedSess.Add(1)
		c.srv.diag.rejectedSessions.Add(1)
		return status.BadSecureChannelIDInvalid
	}
	if err := c.checkActivateSecurity(s, req); err != nil {
		c.srv.diag.securityRejectedSess.Add(1)
		c.srv.diag.rejectedSessions.Add(1)
		return err
	}
	var token ua.Body
	switch tok := &req.UserIdentityToken; {
	case tok.Encoding == ua.ExtensionObjectEmpty && tok.TypeID.IsNull():
		token = &ua.AnonymousIdentityToken{} // a null token is anonymous
	case tok.Body != nil:
		token = tok.Body
	default:
		c.srv.diag.securityRejectedSess.Add(1)
		c.srv.diag.rejectedSessions.Add(1)
		return status.BadIdentityTokenInvalid
	}
	id, err := c.authenticate(s, token, req.UserTokenSignature)
	if err != nil {
		c.srv.diag.securityRejectedSess.Add(1)
		c.srv.diag.rejectedSessions.Add(1)
		if sc := statusOf(err); sc != status.BadInternalError {
			return sc
		}
		return status.BadIdentityTokenRejected
	}
	s.mu.Lock()
	if s.activated.Load() && s.channelID.Load() != chID && s.identity != id {
		s.mu.Unlock()
		// A new channel may take over the session only for the same user
		// (§5.7.3); the session stays where it is.
		c.srv.diag.securityRejectedSess.Add(1)
		c.srv.diag.rejectedSessions.Add(1)
		return status.BadUserAccessDenied
	}
	s.identity = id
	s.roles.Store(uint32(id.Roles))
	s.mode.Store(int32(c.ch.SecurityMode()))
	nonce := newNonce()
	s.nonce = nonce
	s.mu.Unlock()
	moved := s.channelID.Swap(chID) != chID
	s.detached.Store(false)
	s.activated.Store(true)
	// The channel has an authenticated session now: full-size requests.
	c.ch.SetMessageLimit(math.MaxUint32)
	if moved {
		c.srv.subs.SessionMoved(s)
	}

	*resp = ua.ActivateSessionResponse{ResponseHeader: resp.ResponseHeader, ServerNonce: nonce}
	if p := c.ecdhRequested(&req.RequestHeader); p != nil {
		// A new key for the next password (the last one is used up).
		if ah, err := c.ephemeralKeyHeader(s, p); err == nil {
			resp.ResponseHeader.AdditionalHeader = ah
		}
	}
	if n := len(req.ClientSoftwareCertificates); n > 0 {
		resp.Results = make([]ua.StatusCode, n) // Good: nothing is checked
	}
	return nil
}

// closeSession answers CloseSession (§5.7.4). The session's queued
// Publish requests get Bad_SessionClosed; with DeleteSubscriptions its
// subscriptions are deleted, without it they live on until their lifetime
// runs out or another session of the same user transfers them
// (subs.Manager.SessionClosed). A session is closed only over the channel it is
// bound to (Bad_SessionIdInvalid otherwise, as the CTT expects).
func (c *conn) closeSession(s *session, req *ua.CloseSessionRequest, resp *ua.CloseSessionResponse) error {
	if s.channelID.Load() != c.ch.ID() {
		return status.BadSessionIDInvalid
	}
	c.srv.sessions.remove(s)
	c.srv.subs.SessionClosed(s, req.DeleteSubscriptions)
	if c.sess == s {
		c.sess = nil
	}
	return nil
}

// cancel answers Cancel (§5.7.5). Every request is answered before the
// next one on a channel is read, so there is never an outstanding request
// to cancel: CancelCount is always 0.
func (c *conn) cancel(_ *session, _ *ua.CancelRequest, resp *ua.CancelResponse) error {
	resp.CancelCount = 0
	return nil
}

// authenticate turns the token into an Identity: a user-name token's
// password is decrypted first (when the server has keys), and the
// Authenticator decides. Repeated failures from one client address are
// answered later and later (backoff), which slows a password guesser
// down and nobody else; each failure is logged with the user name, never
// the password.
func (c *conn) authenticate(s *session, token ua.Body, sig ua.SignatureData) (Identity, error) {
	if c.remote != "" { // a network client (in-process tests have none)
		if d := c.srv.backoff.Delay(c.remote, c.srv.clock()); d > 0 {
			time.Sleep(d)
		}
	}
	user := ""
	s.mu.Lock()
	nonce := s.nonce
	s.mu.Unlock()
	switch t := token.(type) {
	case *ua.UserNameIdentityToken:
		user = t.UserName
		if c.srv.cfg.Security != nil {
			dec, err := c.decryptUserName(s, t, nonce)
			if err != nil {
				c.authFailed(user, err)
				return Identity{}, err
			}
			token = dec
		}
	case *ua.X509IdentityToken:
		user = "(certificate)"
		if c.srv.cfg.Security != nil {
			if err := c.checkX509Token(s, t, sig, nonce); err != nil {
				c.authFailed(user, err)
				return Identity{}, err
			}
		}
	}
	id, err := c.srv.cfg.Authenticator.Authenticate(token)
	if err != nil {
		c.authFailed(user, err)
		return Identity{}, err
	}
	c.srv.backoff.Succeeded(c.remote)
	return id, nil
}

func (c *conn) authFailed(user string, err error) {
	n := 0
	if c.remote != "" {
		n = c.srv.backoff.Failed(c.remote, c.srv.clock())
	}
	c.srv.cfg.Logger.Warn("ActivateSession rejected", "user", user, "remote", c.remote, "channel", c.ch.ID(),
		"status", statusOf(err).Error(), "failures", n)
}

// auditCreate raises the AuditCreateSessionEventType of a CreateSession
// that ended with err (and, for a certificate whose URI is not the
// client's, AuditCertificateMismatchEventType).
func (c *conn) auditCreate(req *ua.CreateSessionRequest, resp *ua.CreateSessionResponse, err error) {
	code := status.Good
	if err != nil {
		code = statusOf(err)
	}
	var sess *session
	if err == nil {
		sess = c.srv.sessions.get(resp.AuthenticationToken)
	}
	a := c.auditOf(id.AuditCreateSessionEventType, sess, "Session/CreateSession", err == nil, code)
	a.entry = req.RequestHeader.AuditEntryID
	a.message = fmt.Sprintf("CreateSession %q from %s (%s): %s", req.SessionName, req.ClientDescription.ApplicationURI, c.remote, code.Name())
	cert := c.ch.PeerCertificate()
	a.fields = map[string]ua.Variant{"ClientCertificate": ua.MustVariant(bytes.Clone(cert))}
	if len(cert) > 0 {
		a.fields["ClientCertificateThumbprint"] = ua.MustVariant(fmt.Sprintf("%X", secpol.Thumbprint(cert)))
	}
	if err == nil {
		a.session = resp.SessionID
		a.fields["RevisedSessionTimeout"] = ua.MustVariant(resp.RevisedSessionTimeout)
	}
	c.srv.raiseAudit(a)
	if code == status.BadCertificateURIInvalid {
		m := c.auditOf(id.AuditCertificateMismatchEventType, nil, "Session/CreateSession", false, code)
		m.message = fmt.Sprintf("the client certificate's URI is not the client's ApplicationUri %q", req.ClientDescription.ApplicationURI)
		m.fields = map[string]ua.Variant{"Certificate": ua.MustVariant(bytes.Clone(cert))}
		c.srv.raiseAudit(m)
	}
}

// auditActivate raises the AuditActivateSessionEventType of an
// ActivateSession of s that ended with err: who asked, with the token's
// secrets left out.
func (c *conn) auditActivate(s *session, req *ua.ActivateSessionRequest, err error) {
	code := status.Good
	if err != nil {
		code = statusOf(err)
	}
	a := c.auditOf(id.AuditActivateSessionEventType, s, "Session/ActivateSession", err == nil, code)
	a.entry = req.RequestHeader.AuditEntryID
	token := req.UserIdentityToken.Body
	if token == nil {
		token = &ua.AnonymousIdentityToken{}
	}
	switch t := token.(type) {
	case *ua.UserNameIdentityToken:
		a.user = t.UserName
	case *ua.X509IdentityToken:
		if cert, perr := x509.ParseCertificate(t.CertificateData); perr == nil {
			a.user = cert.Subject.String()
		}
	case *ua.AnonymousIdentityToken:
		a.user = "anonymous"
	}
	a.message = fmt.Sprintf("ActivateSession by %q from %s: %s", a.user, c.remote, code.Name())
	a.fields = map[string]ua.Variant{"UserIdentityToken": ua.MustVariant(auditToken(token))}
	c.srv.raiseAudit(a)
}
