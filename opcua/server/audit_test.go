package server

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
)

// TestAuditLimiter: auditBurst failures at once, then one per auditEvery;
// the first let through after a pause counts those left out.
func TestAuditLimiter(t *testing.T) {
	var l auditLimiter
	t0 := time.Unix(1000, 0)
	passed := 0
	for range 100 {
		if ok, _ := l.take(t0); ok {
			passed++
		}
	}
	if passed != auditBurst {
		t.Fatalf("%d of 100 at once let through, want %d", passed, auditBurst)
	}
	ok, left := l.take(t0.Add(3 * auditEvery))
	if !ok || left != 100-auditBurst {
		t.Fatalf("after 3 periods: %v, %d left out before, want true, %d", ok, left, 100-auditBurst)
	}
	ok1, _ := l.take(t0.Add(3 * auditEvery))
	ok2, _ := l.take(t0.Add(3 * auditEvery))
	ok3, _ := l.take(t0.Add(3 * auditEvery))
	if !ok1 || !ok2 || ok3 {
		t.Fatalf("the 3 periods' tokens: %v %v %v, want true true false", ok1, ok2, ok3)
	}
}

// records collects Config.Audit's records.
type records struct {
	mu   sync.Mutex
	recs []auditRecord
	raw  []string
}

func (r *records) put(b []byte) {
	var rec auditRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		panic(err)
	}
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.raw = append(r.raw, string(b))
	r.mu.Unlock()
}

// TestAuditLoginFlood: 1,000 failed ActivateSessions at one instant give
// auditBurst audit records, none with the password; a failure seconds
// later is recorded with the count of those left out. Successes are not
// limited.
func TestAuditLoginFlood(t *testing.T) {
	var rs records
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newTestServer(t, Config{Audit: rs.put, Clock: clock})
	tc := newTestConn(t, s, 1)
	cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{SessionName: "flood", RequestedSessionTimeout: 60000}))
	tc.token = cs.AuthenticationToken
	bad := func() {
		t.Helper()
		tok := &ua.UserNameIdentityToken{PolicyID: "username", UserName: "mallory", Password: []byte("s3cret-guess")}
		resp := tc.call(&ua.ActivateSessionRequest{UserIdentityToken: ua.ExtensionObject{Body: tok}})
		if f, ok := resp.(*ua.ServiceFault); !ok || f.ResponseHeader.ServiceResult.IsGood() {
			t.Fatalf("a user-name token with AnonymousOnly: %T", resp)
		}
	}
	for range 1000 {
		bad()
	}
	count := func(ok bool) (n int) {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		for _, r := range rs.recs {
			if r.Type == "AuditActivateSessionEventType" && r.Status == ok {
				n++
			}
		}
		return n
	}
	if n := count(false); n != auditBurst {
		t.Fatalf("1000 failures at once: %d records, want %d", n, auditBurst)
	}
	mu.Lock()
	now = now.Add(5 * time.Second)
	mu.Unlock()
	bad()
	rs.mu.Lock()
	last := rs.recs[len(rs.recs)-1]
	rs.mu.Unlock()
	if last.Suppressed != 1000-auditBurst || last.Code != "BadIdentityTokenRejected" || last.User != "mallory" ||
		!strings.Contains(last.Message, "980 failures before this one not reported") {
		t.Fatalf("the failure after the pause: %+v", last)
	}
	for range 50 {
		subtest.WantOK[ua.ActivateSessionResponse](t, tc.call(subtest.AnonymousActivate()))
	}
	if n := count(true); n != 50 {
		t.Fatalf("50 activations: %d records", n)
	}
	for _, r := range rs.raw {
		if strings.Contains(r, "s3cret") {
			t.Fatalf("a record holds the password: %s", r)
		}
	}
}

// TestAuditReceivers: audit events go to SecurityAdmin and Auditor
// sessions only; other events to every session.
func TestAuditReceivers(t *testing.T) {
	s := newTestServer(t, Config{Audit: func([]byte) {}})
	audit := &auditEvent{}
	other := &plainEvent{}
	for _, c := range []struct {
		roles Roles
		audit bool
	}{
		{RolesOf(RoleAnonymous, RoleOperator), false},
		{RolesOf(RoleAuthenticatedUser, RoleObserver), false},
		{RolesOf(RoleAuthenticatedUser, RoleConfigureAdmin, RoleEngineer), false},
		{RolesOf(RoleAuthenticatedUser, RoleSecurityAdmin), true},
		{RolesOf(RoleAuthenticatedUser, RoleAuditor), true},
	} {
		sess := &session{}
		sess.roles.Store(uint32(c.roles))
		if got := s.receives(sess, audit); got != c.audit {
			t.Errorf("%v: audit event received %v, want %v", c.roles.List(), got, c.audit)
		}
		if !s.receives(sess, other) {
			t.Errorf("%v: an alarm's event not received", c.roles.List())
		}
	}
	// Auditor adds no right in the address space: it observes.
	u := userOf(RolesOf(RoleAuthenticatedUser, RoleAuditor))
	if Roles(u).MayOperate() || !Roles(u).MayObserve() {
		t.Errorf("an Auditor's rights: operate %v, observe %v", Roles(u).MayOperate(), Roles(u).MayObserve())
	}
}
