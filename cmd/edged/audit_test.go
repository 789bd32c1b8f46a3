package main

import (
	"context"
	"crypto/rsa"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/configsvc"
	"github.com/edged/edged/internal/testutil/peer"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua/id"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"
)

// auditSeen is an event a watcher received: its type and fields.
type auditSeen struct {
	typ    uint32
	source string
	user   string
	status bool
	text   string // every field, printed: no secret may be in it
}

// auditWatch subscribes c to every event of the Server object, selecting
// the audit fields; next returns the events up to the RefreshEndEvent of
// a ConditionRefresh it calls on that subscription.
func auditWatch(t *testing.T, ctx context.Context, c *opcua.Client) (next func() []auditSeen) {
	t.Helper()
	notes := make(chan *opcua.PublishNotificationData, 256)
	sub, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 20 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	var sel []*gua.SimpleAttributeOperand
	for _, f := range []struct {
		typ  uint32
		path string
	}{
		{id.BaseEventType, "EventType"}, {id.BaseEventType, "SourceName"}, {id.AuditEventType, "ClientUserId"},
		{id.AuditEventType, "Status"}, {id.BaseEventType, "Message"}, {id.AuditSecurityEventType, "StatusCodeId"},
		{id.AuditActivateSessionEventType, "UserIdentityToken"}, {id.AuditUpdateMethodEventType, "InputArguments"},
		{id.AuditWriteUpdateEventType, "NewValue"},
	} {
		sel = append(sel, peer.GopcuaField(f.typ, f.path))
	}
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnNeither, peer.GopcuaEventItem(gua.NewNumericNodeID(0, id.Server), 1, 1000, sel, nil))
	if err != nil || res.Results[0].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %+v", err, res)
	}
	return func() []auditSeen {
		t.Helper()
		// Events reach a subscription in the order they were raised: what
		// was raised before this ConditionRefresh comes before its end.
		if err := peer.GopcuaConditionRefresh(ctx, c, sub.SubscriptionID); err != nil {
			t.Fatalf("ConditionRefresh: %v", err)
		}
		var seen []auditSeen
		for {
			evs, err := peer.GopcuaNextEvents(ctx, notes)
			if err != nil {
				t.Fatalf("no RefreshEndEvent: %v (seen %d events)", err, len(seen))
			}
			for _, e := range evs {
				f := e.EventFields
				typ, _ := f[0].Value().(*gua.NodeID)
				if typ == nil {
					continue
				}
				s := auditSeen{typ: typ.IntID()}
				s.source, _ = f[1].Value().(string)
				s.user, _ = f[2].Value().(string)
				s.status, _ = f[3].Value().(bool)
				for _, x := range f {
					s.text += fmt.Sprintf("%v|", x.Value())
				}
				if s.typ == id.RefreshEndEventType {
					return seen
				}
				seen = append(seen, s)
			}
		}
	}
}

// TestAuditEvents: edged audits (Server/Auditing true). With gopcua, over
// SignAndEncrypt: a SecurityAdmin and an Auditor receive the audit events
// of a wrong password, of an untrusted client certificate, of a session
// and of a write and a method call; an Observer subscribed the same way
// receives none of them. No event nor the audit log holds the password.
func TestAuditEvents(t *testing.T) {
	dir := t.TempDir()
	const wrong = "Wr0ng-Secret-Guess"
	for _, u := range []struct{ name, role string }{{"sec", "SecurityAdmin"}, {"aud", "Auditor"}, {"obs", "Observer"}, {"op", "Operator"}} {
		edgedUser(t, dir, u.name+"-password\n", "add", u.name, "--role", u.role)
	}
	url, _ := startSecure(t, dir, true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const uri = "urn:edged:test:gopcua"
	cert, key := clientCert(t, uri, 2048)
	os.WriteFile(filepath.Join(dir, pki.TrustedCerts, "client.der"), cert, 0o644)
	eps, err := opcua.GetEndpoints(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := opcua.SelectEndpoint(eps, secpol.URIBasic256Sha256, gua.MessageSecurityModeSignAndEncrypt)
	ac := auditClients{url: url, ep: ep, uri: uri, cert: cert, key: key}

	c, err := dialSecure(ctx, url, ep, uri, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Node(gua.NewNumericNodeID(0, id.Server_Auditing)).Value(ctx)
	if err != nil || v.Value() != true {
		t.Fatalf("Server/Auditing: %v %v", v, err)
	}
	c.Close(ctx)

	watch := map[string]func() []auditSeen{}
	for _, u := range []string{"sec", "aud", "obs"} {
		watch[u] = auditWatch(t, ctx, ac.user(t, ctx, u, u+"-password"))
	}
	auditedActions(t, ctx, ac, wrong)
	checkAuditEvents(t, watch, wrong)
	checkAuditHistory(t, ctx, ac)
	waitAuditLog(t, ctx, dir, wrong)
}

// auditClients dials TestAuditEvents' sessions: its endpoint, with its
// trusted client certificate.
type auditClients struct {
	url, uri string
	ep       *gua.EndpointDescription
	cert     []byte
	key      *rsa.PrivateKey
}

// user returns a session of user name, closed when the test ends.
func (ac auditClients) user(t *testing.T, ctx context.Context, name, password string) *opcua.Client {
	t.Helper()
	c, err := dialUser(ctx, ac.url, ac.ep, ac.uri, ac.cert, ac.key, name, password)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// auditedActions does what TestAuditEvents expects audited: a wrong
// password, an untrusted client certificate, an Operator's session, its
// write and its method call.
func auditedActions(t *testing.T, ctx context.Context, ac auditClients, wrong string) {
	t.Helper()
	if c, err := dialUser(ctx, ac.url, ac.ep, ac.uri, ac.cert, ac.key, "op", wrong); err == nil {
		c.Close(ctx)
		t.Fatal("a wrong password logged in")
	}
	stranger, strangerKey := clientCert(t, ac.uri, 2048)
	if c, err := dialSecure(ctx, ac.url, ac.ep, ac.uri, stranger, strangerKey); err == nil {
		c.Close(ctx)
		t.Fatal("an untrusted client connected")
	}
	op := ac.user(t, ctx, "op", "op-password")
	wr, err := op.Write(ctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{
		NodeID: gua.NewStringNodeID(2, "sim.Setpoint"), AttributeID: gua.AttributeIDValue,
		Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(float32(42.5))},
	}}})
	if err != nil || wr.Results[0] != gua.StatusOK {
		t.Fatalf("Write: %v %v", err, wr)
	}
	cr, err := op.Call(ctx, &gua.CallMethodRequest{ObjectID: gua.MustParseNodeID("ns=2;s=sim"),
		MethodID: gua.MustParseNodeID("ns=2;s=sim.WriteCommand"), InputArguments: []*gua.Variant{gua.MustVariant(uint16(5))}})
	if err != nil || cr.StatusCode != gua.StatusOK {
		t.Fatalf("Call: %v %v", err, cr)
	}
}

// checkAuditEvents: the SecurityAdmin ("sec") and the Auditor ("aud")
// received the audit events of auditedActions, the Observer ("obs") no
// audit event; no event holds the wrong password.
func checkAuditEvents(t *testing.T, watch map[string]func() []auditSeen, wrong string) {
	t.Helper()
	wants := []struct {
		typ    uint32
		user   string
		status bool
	}{
		{id.AuditActivateSessionEventType, "op", false},
		{id.AuditCertificateUntrustedEventType, "", false},
		{id.AuditCreateSessionEventType, "", true},
		{id.AuditActivateSessionEventType, "op", true},
		{id.AuditWriteUpdateEventType, "op", true},
		{id.AuditUpdateMethodEventType, "op", true},
	}
	for _, u := range []string{"sec", "aud", "obs"} {
		seen := watch[u]()
		audits := 0
		for _, s := range seen {
			if strings.Contains(s.text, wrong) {
				t.Errorf("%s: an event holds the password: %s", u, s.text)
			}
			if isAudit(s.typ) {
				audits++
			}
		}
		if u == "obs" {
			if audits != 0 {
				t.Errorf("the Observer received %d audit events", audits)
			}
			continue
		}
		for _, w := range wants {
			found := false
			for _, s := range seen {
				if s.typ == w.typ && s.user == w.user && s.status == w.status {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no event i=%d of %q with Status %v among %d", u, w.typ, w.user, w.status, len(seen))
			}
		}
		t.Logf("%s: %d events, %d audit events", u, len(seen), audits)
	}
}

// checkAuditHistory: the event history has the failed ActivateSession
// too, for the SecurityAdmin and not for the Observer (gopcua's
// HistoryReadEvent, OfType AuditActivateSessionEventType, ClientUserId
// and Status).
func checkAuditHistory(t *testing.T, ctx context.Context, ac auditClients) {
	t.Helper()
	for _, u := range []struct {
		name string
		want int
	}{{"sec", 1}, {"obs", 0}} {
		c := ac.user(t, ctx, u.name, u.name+"-password")
		sel := []*gua.SimpleAttributeOperand{
			{TypeDefinitionID: gua.NewNumericNodeID(0, id.AuditEventType), BrowsePath: []*gua.QualifiedName{{Name: "ClientUserId"}}, AttributeID: gua.AttributeIDValue},
			{TypeDefinitionID: gua.NewNumericNodeID(0, id.AuditEventType), BrowsePath: []*gua.QualifiedName{{Name: "Status"}}, AttributeID: gua.AttributeIDValue},
		}
		where := &gua.ContentFilter{Elements: []*gua.ContentFilterElement{{FilterOperator: gua.FilterOperatorOfType,
			FilterOperands: []*gua.ExtensionObject{gua.NewExtensionObject(&gua.LiteralOperand{Value: gua.MustVariant(gua.NewNumericNodeID(0, id.AuditActivateSessionEventType))})}}}}
		resp, err := c.HistoryReadEvent(ctx, []*gua.HistoryReadValueID{{NodeID: gua.NewNumericNodeID(0, id.Server), DataEncoding: &gua.QualifiedName{}}},
			&gua.ReadEventDetails{StartTime: time.Now().Add(-time.Hour), EndTime: time.Now().Add(time.Hour), Filter: &gua.EventFilter{SelectClauses: sel, WhereClause: where}})
		if err != nil {
			t.Fatalf("%s: HistoryReadEvent: %v", u.name, err)
		}
		failed := 0
		if he, ok := resp.Results[0].HistoryData.Value.(*gua.HistoryEvent); ok {
			for _, e := range he.Events {
				if e.EventFields[0].Value() == "op" && e.EventFields[1].Value() == false {
					failed++
				}
			}
		}
		if failed != u.want {
			t.Errorf("%s: %d failed ActivateSessions of op in the event history (%v), want %d", u.name, failed, resp.Results[0].StatusCode, u.want)
		}
	}
}

// waitAuditLog: the audit log has the same records, without the
// password (they are written behind the events: it is read until they
// are there).
func waitAuditLog(t *testing.T, ctx context.Context, dir, wrong string) {
	t.Helper()
	const failed = `"type":"AuditActivateSessionEventType","status":false,"statusCode":"BadUserAccessDenied"`
	for {
		log, _ := os.ReadFile(filepath.Join(dir, configsvc.Dir, "audit.log"))
		if strings.Contains(string(log), wrong) {
			t.Fatal("the audit log holds the password")
		}
		if strings.Contains(string(log), failed) && strings.Contains(string(log), `"type":"AuditUpdateMethodEventType"`) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the audit log has no failed ActivateSession or no method call:\n%s", log)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// isAudit reports whether typ is an audit event type edged raises.
func isAudit(typ uint32) bool {
	switch typ {
	case id.AuditConditionAcknowledgeEventType, id.AuditConditionConfirmEventType, id.AuditConditionCommentEventType,
		id.AuditConditionEnableEventType, id.AuditConditionShelvingEventType:
		return true
	}
	return typ >= id.AuditEventType && typ <= id.AuditUpdateMethodEventType
}
