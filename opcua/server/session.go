package server

import (
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/server/internal/subs"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// session is one client session. Its id, token, name and timeout never
// change after CreateSession; the rest is atomic or guarded by mu, because
// a session moves between secure channels (and so between connection
// goroutines) and the sweeper closes it from its own goroutine.
type session struct {
	id      ua.NodeID // SessionId: ns=1, a random GUID
	token   ua.NodeID // AuthenticationToken: ns=0, a random GUID, secret
	name    string
	timeout time.Duration
	created time.Time
	client  clientKey // the application that created it

	channelID atomic.Uint32 // the secure channel the session is bound to
	activated atomic.Bool
	detached  atomic.Bool // that channel closed, and no other took the session over
	closed    atomic.Bool
	lastUsed  atomic.Int64  // Clock().UnixNano() of the last request
	roles     atomic.Uint32 // identity.Roles, read on every request
	mode      atomic.Int32  // the security mode of the channel it was last activated over

	mu          sync.Mutex
	identity    Identity
	nonce       []byte                  // the last server nonce, which the next ActivateSession signs
	clientCert  []byte                  // the client certificate (DER) of a secure CreateSession
	clientNonce []byte                  // the CreateSession's ClientNonce (the enhanced ECC policies' session signatures hold it)
	ecdhKey     *ecdh.PrivateKey        // the ephemeral key last given (ECDHKey), for an EccEncryptedSecret
	ecdhPolicy  *secpol.ECC             // its policy
	cps         contPoints[browseState] // Browse continuation points
	hcps        contPoints[*histOp]     // HistoryRead continuation points
}

// ChannelID, Closed and User make a session a subs.Session.
func (s *session) ChannelID() uint32 { return s.channelID.Load() }
func (s *session) Closed() bool      { return s.closed.Load() }
func (s *session) Detached() bool    { return s.detached.Load() }
func (s *session) User() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.identity.Anonymous {
		// Anonymous users are told apart by their application
		// (§5.14.7): its ApplicationUri and, where it sent one, its
		// certificate.
		return owner{anonymous: true, client: s.client}
	}
	return owner{name: s.identity.UserName}
}

// owner is who a session's subscriptions belong to (subs.Session.User):
// TransferSubscriptions moves them between sessions of one owner only.
type owner struct {
	anonymous bool
	name      string
	client    clientKey
}

// clientKey identifies the client application of a session: the
// ApplicationUri of its CreateSession and the SHA-256 of the certificate
// it sent there (zero if none).
type clientKey struct {
	appURI string
	cert   [sha256.Size]byte
}

// newClientKey returns the key of the client of req.
func newClientKey(req *ua.CreateSessionRequest) clientKey {
	k := clientKey{appURI: req.ClientDescription.ApplicationURI}
	if len(req.ClientCertificate) > 0 {
		k.cert = sha256.Sum256(req.ClientCertificate)
	}
	return k
}

var _ subs.Session = (*session)(nil)

// touch records a request at now.
func (s *session) touch(now time.Time) { s.lastUsed.Store(now.UnixNano()) }

// sessionTable holds the sessions by authentication token.
type sessionTable struct {
	max     int
	maxCPs  int
	maxHCPs int
	diag    *diagnostics
	mu      sync.Mutex
	byToken map[ua.NodeID]*session
}

func newSessionTable(max, maxCPs, maxHCPs int, diag *diagnostics) *sessionTable {
	return &sessionTable{max: max, maxCPs: maxCPs, maxHCPs: maxHCPs, diag: diag, byToken: make(map[ua.NodeID]*session)}
}

// randomGUID returns a GUID from crypto/rand (which does not fail).
func randomGUID() ua.GUID {
	var b [16]byte
	rand.Read(b[:])
	g := ua.GUID{
		Data1: uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24,
		Data2: uint16(b[4]) | uint16(b[5])<<8,
		Data3: uint16(b[6]) | uint16(b[7])<<8,
	}
	copy(g.Data4[:], b[8:])
	return g
}

// create makes a new, not yet activated session bound to channelID, or
// fails with Bad_TooManySessions.
func (t *sessionTable) create(name string, client clientKey, timeout time.Duration, channelID uint32, now time.Time) (*session, error) {
	s := &session{
		client:  client,
		id:      ua.NewGUIDNodeID(1, randomGUID()),
		token:   ua.NewGUIDNodeID(0, randomGUID()),
		name:    name,
		timeout: timeout,
		created: now,
	}
	s.cps.max = t.maxCPs
	s.hcps.max = t.maxHCPs
	s.channelID.Store(channelID)
	s.touch(now)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byToken) >= t.max {
		// Make room by closing the oldest session not activated yet
		// (OPC 10000-4 §5.6.2); with none, refuse.
		old := t.oldestUnactivated()
		if old == nil {
			t.diag.rejectedSessions.Add(1)
			return nil, status.BadTooManySessions
		}
		t.removeLocked(old)
		t.diag.sessionAborts.Add(1)
	}
	t.byToken[s.token] = s
	t.diag.cumulatedSessions.Add(1)
	t.diag.currentSessions.Store(uint32(len(t.byToken)))
	return s, nil
}

// get returns the session of token, nil if there is none.
func (t *sessionTable) get(token ua.NodeID) *session {
	t.mu.Lock()
	s := t.byToken[token]
	t.mu.Unlock()
	return s
}

// remove closes s and drops it from the table; it reports false when s
// was closed already.
func (t *sessionTable) remove(s *session) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.removeLocked(s)
}

// removeLocked is remove with t.mu held.
func (t *sessionTable) removeLocked(s *session) bool {
	if !s.closed.CompareAndSwap(false, true) {
		return false
	}
	delete(t.byToken, s.token)
	t.diag.currentSessions.Store(uint32(len(t.byToken)))
	s.mu.Lock()
	s.cps.releaseAll()
	s.hcps.releaseAll()
	s.mu.Unlock()
	return true
}

// oldestUnactivated returns the session created first among those not
// activated yet, nil if every session is activated. Called with t.mu held.
func (t *sessionTable) oldestUnactivated() *session {
	var old *session
	for _, s := range t.byToken {
		if !s.activated.Load() && (old == nil || s.created.Before(old.created)) {
			old = s
		}
	}
	return old
}

// detach marks the sessions bound to channel channelID, which closed, as
// detached, until ActivateSession over another channel takes one over.
func (t *sessionTable) detach(channelID uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.byToken {
		if s.channelID.Load() == channelID {
			s.detached.Store(true)
			if s.channelID.Load() != channelID {
				s.detached.Store(false) // ActivateSession took it over meanwhile
			}
		}
	}
}

// closeUnactivated closes the sessions created over channel channelID
// and never activated: the channel closed, and no other channel may
// activate them (§5.6.3). It returns how many it closed.
func (t *sessionTable) closeUnactivated(channelID uint32) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.byToken {
		if !s.activated.Load() && s.channelID.Load() == channelID && t.removeLocked(s) {
			t.diag.sessionAborts.Add(1)
			n++
		}
	}
	return n
}

// channels returns the ids of the secure channels that have an activated
// session bound to them. A channel whose sessions are not activated yet
// counts as one without a session for the connection limits: else
// connections that create a session and never activate it would hold every
// place (the sessions close with their channel).
func (t *sessionTable) channels() map[uint32]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := make(map[uint32]bool, len(t.byToken))
	for _, s := range t.byToken {
		if s.activated.Load() {
			m[s.channelID.Load()] = true
		}
	}
	return m
}

// expire closes the sessions that had no request for their timeout at
// now and returns how many it closed.
func (t *sessionTable) expire(now time.Time) int {
	var dead []*session
	t.mu.Lock()
	for _, s := range t.byToken {
		if now.UnixNano()-s.lastUsed.Load() > int64(s.timeout) {
			dead = append(dead, s)
		}
	}
	t.mu.Unlock()
	n := 0
	for _, s := range dead {
		if t.remove(s) {
			t.diag.sessionTimeouts.Add(1)
			n++
		}
	}
	return n
}

// closeAll closes every session (server shutdown) and counts them as
// aborted.
func (t *sessionTable) closeAll() {
	t.mu.Lock()
	all := make([]*session, 0, len(t.byToken))
	for _, s := range t.byToken {
		all = append(all, s)
	}
	t.mu.Unlock()
	for _, s := range all {
		if t.remove(s) {
			t.diag.sessionAborts.Add(1)
		}
	}
}

// count returns the number of sessions.
func (t *sessionTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byToken)
}

// sessionNeed says what a service requires of the request's
// authentication token.
type sessionNeed uint8

const (
	noSession        sessionNeed = iota // discovery, CreateSession
	createdSession                      // ActivateSession, CloseSession: any session of the token
	activatedSession                    // everything else
)

// lookup finds the session of a request's token for a service with need,
// arriving on channelID at now. Errors are the service results of
// OPC 10000-4 Table 182: Bad_SessionIdInvalid for an unknown (or closed)
// token, Bad_SessionNotActivated before ActivateSession,
// Bad_SecureChannelIdInvalid for an activated session used over another
// secure channel than the one it is bound to.
func (t *sessionTable) lookup(cached *session, token ua.NodeID, need sessionNeed, channelID uint32, now time.Time) (*session, error) {
	s := cached
	if s == nil || s.token != token || s.closed.Load() {
		s = t.get(token)
	}
	if s == nil || s.closed.Load() {
		return nil, status.BadSessionIDInvalid
	}
	if need == activatedSession {
		if !s.activated.Load() {
			return nil, status.BadSessionNotActivated
		}
		if s.channelID.Load() != channelID {
			return nil, status.BadSecureChannelIDInvalid
		}
	}
	s.touch(now)
	return s, nil
}
