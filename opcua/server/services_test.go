package server

import (
	"bytes"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

func TestServiceTableIsConsistent(t *testing.T) {
	seen := map[uint32]bool{}
	for _, svc := range services {
		if seen[svc.request] {
			t.Errorf("%s: request id %d listed twice", svc.name, svc.request)
		}
		seen[svc.request] = true
		body, resp := svc.values()
		h := body.Header()
		if got := resp.BinaryEncodingID(); got != ua.NewNumericNodeID(0, svc.response) {
			t.Errorf("%s: response value is %T (%v), want encoding id %d", svc.name, resp, got, svc.response)
		}
		if got := body.BinaryEncodingID(); got != ua.NewNumericNodeID(0, svc.request) {
			t.Errorf("%s: request value is %T (%v), want encoding id %d", svc.name, body, got, svc.request)
		}
		if h == nil {
			t.Errorf("%s: no request header", svc.name)
		}
		if id.Name(svc.request) != svc.name+"Request_Encoding_DefaultBinary" {
			t.Errorf("%s: request id %d is %s", svc.name, svc.request, id.Name(svc.request))
		}
		if id.Name(svc.response) != svc.name+"Response_Encoding_DefaultBinary" {
			t.Errorf("%s: response id %d is %s", svc.name, svc.response, id.Name(svc.response))
		}
	}
}

func TestGetEndpoints(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	r := subtest.WantOK[ua.GetEndpointsResponse](t, tc.call(&ua.GetEndpointsRequest{EndpointURL: "opc.tcp://10.0.0.5:4840"}))
	if len(r.Endpoints) != 1 {
		t.Fatalf("%d endpoints, want 1", len(r.Endpoints))
	}
	e := r.Endpoints[0]
	// The host and port the client used (OPC 10000-4 §5.4.4.2); our URL
	// when it gave none that can be used.
	for url, want := range map[string]string{"": testURL, "http://x": testURL, "opc.tcp://": testURL, "opc.tcp://a b:1": testURL,
		"opc.tcp://gw.plant:14840/": "opc.tcp://gw.plant:14840", "opc.tcp://[fe80::1]:4840": "opc.tcp://[fe80::1]:4840"} {
		r := subtest.WantOK[ua.GetEndpointsResponse](t, tc.call(&ua.GetEndpointsRequest{EndpointURL: url}))
		if got := r.Endpoints[0].EndpointURL; got != want {
			t.Errorf("GetEndpoints(%q): %q, want %q", url, got, want)
		}
	}
	if e.EndpointURL != "opc.tcp://10.0.0.5:4840" || e.SecurityMode != ua.MessageSecurityModeNone || e.SecurityPolicyURI != SecurityPolicyNone ||
		e.TransportProfileURI != TransportProfileUATCP || len(e.UserIdentityTokens) != 1 ||
		e.UserIdentityTokens[0].TokenType != ua.UserTokenTypeAnonymous || e.Server.ApplicationURI != DefaultApplicationURI ||
		e.Server.ApplicationType != ua.ApplicationTypeServer {
		t.Errorf("endpoint %+v", e)
	}
	for _, tt := range []struct {
		profiles []string
		want     int
	}{
		{[]string{TransportProfileUATCP}, 1},
		{[]string{TransportProfileUATCP + "?x=1"}, 1},
		{[]string{"http://opcfoundation.org/UA-Profile/Transport/https-uabinary"}, 0},
		{[]string{"x", TransportProfileUATCP}, 1},
	} {
		r := subtest.WantOK[ua.GetEndpointsResponse](t, tc.call(&ua.GetEndpointsRequest{ProfileURIs: tt.profiles}))
		if len(r.Endpoints) != tt.want {
			t.Errorf("ProfileUris %q: %d endpoints, want %d", tt.profiles, len(r.Endpoints), tt.want)
		}
	}
}

func TestFindServers(t *testing.T) {
	s := newTestServer(t, Config{ApplicationURI: "urn:gw01"})
	tc := newTestConn(t, s, 1)
	for _, tt := range []struct {
		uris []string
		want int
	}{{nil, 1}, {[]string{"urn:gw01"}, 1}, {[]string{"urn:other"}, 0}, {[]string{"urn:other", "urn:gw01"}, 1}} {
		r := subtest.WantOK[ua.FindServersResponse](t, tc.call(&ua.FindServersRequest{ServerURIs: tt.uris}))
		if len(r.Servers) != tt.want {
			t.Errorf("ServerUris %q: %d servers, want %d", tt.uris, len(r.Servers), tt.want)
		}
		if tt.want == 1 && (r.Servers[0].ApplicationURI != "urn:gw01" || r.Servers[0].DiscoveryURLs[0] != testURL) {
			t.Errorf("server %+v", r.Servers[0])
		}
	}
}

func TestUnsupportedAndMalformed(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	// A real service we do not implement: the handle is echoed.
	subtest.WantFault(t, tc.call(&ua.QueryFirstRequest{}), status.BadServiceUnsupported)
	// A type id that is no request at all.
	msg := ua.AppendMessage(nil, &ua.ReadRequest{RequestHeader: ua.RequestHeader{RequestHandle: 77}})
	msg[1] = 0xFF                                                   // two-byte id 631 -> four-byte form is not used; corrupt the numeric id
	r := tc.raw(append([]byte{0x01, 0x00, 0x39, 0x30}, msg[3:]...)) // ns=0;i=12345
	subtest.WantFault(t, r, status.BadServiceUnsupported)
	// Numeric ids below, between and above those of the services.
	for _, n := range []uint32{0, 1, 421, 630, 848, 1 << 31, ^uint32(0)} {
		typeID := ua.NewNumericNodeID(0, n)
		r := tc.raw(append(typeID.Encode(nil), msg[3:]...))
		subtest.WantFault(t, r, status.BadServiceUnsupported)
	}

	good := ua.AppendMessage(nil, &ua.ReadRequest{RequestHeader: ua.RequestHeader{RequestHandle: 9}, NodesToRead: []ua.ReadValueID{{}}})
	// Trailing bytes.
	r = tc.raw(append(bytes.Clone(good), 0))
	subtest.WantFault(t, r, status.BadDecodingError)
	if h := r.(*ua.ServiceFault).ResponseHeader.RequestHandle; h != 9 {
		t.Errorf("decoding error: handle %d, want 9 echoed", h)
	}
	// Every truncation is a decoding error (or, for a cut type id, one
	// without handle); none kills the connection.
	for n := 0; n < len(good); n++ {
		r := tc.raw(good[:n])
		subtest.WantFault(t, r, status.BadDecodingError)
	}
	// Nothing at all.
	subtest.WantFault(t, tc.raw(nil), status.BadDecodingError)
	if d := s.Diagnostics(); d.RejectedRequestsCount < uint32(len(good))+4 {
		t.Errorf("RejectedRequestsCount %d", d.RejectedRequestsCount)
	}
}

func TestSessionLifecycle(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	read := &ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_CurrentTime), AttributeID: 13}}}

	subtest.WantFault(t, tc.call(read), status.BadSessionIDInvalid)
	cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{SessionName: "s1", RequestedSessionTimeout: 30000}))
	if len(cs.ServerNonce) != 32 || cs.RevisedSessionTimeout != 30000 || cs.SessionID.IsNull() || cs.AuthenticationToken.IsNull() ||
		len(cs.ServerEndpoints) != 1 || cs.MaxRequestMessageSize == 0 {
		t.Errorf("CreateSession response %+v", cs)
	}
	tc.token = cs.AuthenticationToken
	subtest.WantFault(t, tc.call(read), status.BadSessionNotActivated)

	// The first activation must come over the creating channel.
	other := newTestConn(t, s, 2)
	other.token = cs.AuthenticationToken
	subtest.WantFault(t, other.call(subtest.AnonymousActivate()), status.BadSecureChannelIDInvalid)

	act := subtest.WantOK[ua.ActivateSessionResponse](t, tc.call(subtest.AnonymousActivate()))
	if len(act.ServerNonce) != 32 || bytes.Equal(act.ServerNonce, cs.ServerNonce) {
		t.Errorf("ActivateSession nonce %x", act.ServerNonce)
	}
	if r := tc.call(read); subtest.FaultOf(r) != status.Good {
		t.Fatalf("Read after activation: %v", subtest.FaultOf(r))
	}
	// Another channel may not use it, but may take it over.
	subtest.WantFault(t, other.call(read), status.BadSecureChannelIDInvalid)
	subtest.WantOK[ua.ActivateSessionResponse](t, other.call(subtest.AnonymousActivate()))
	subtest.WantOK[ua.ReadResponse](t, other.call(read))
	subtest.WantFault(t, tc.call(read), status.BadSecureChannelIDInvalid)
	subtest.WantFault(t, tc.call(&ua.CloseSessionRequest{}), status.BadSessionIDInvalid)

	if c := subtest.WantOK[ua.CancelResponse](t, other.call(&ua.CancelRequest{RequestHandle: 1})); c.CancelCount != 0 {
		t.Errorf("CancelCount %d", c.CancelCount)
	}
	if d := s.Diagnostics(); d.CurrentSessionCount != 1 || d.CumulatedSessionCount != 1 {
		t.Errorf("diagnostics %+v", d)
	}
	subtest.WantOK[ua.CloseSessionResponse](t, other.call(&ua.CloseSessionRequest{DeleteSubscriptions: true}))
	subtest.WantFault(t, other.call(read), status.BadSessionIDInvalid)
	if d := s.Diagnostics(); d.CurrentSessionCount != 0 || d.CumulatedSessionCount != 1 {
		t.Errorf("diagnostics after close %+v", d)
	}
}

func TestActivateSessionIdentityTokens(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{}))
	tc.token = cs.AuthenticationToken
	tok := func(b ua.Body) *ua.ActivateSessionRequest {
		return &ua.ActivateSessionRequest{UserIdentityToken: ua.ExtensionObject{TypeID: b.BinaryEncodingID(), Encoding: ua.ExtensionObjectBinary, Body: b}}
	}
	subtest.WantFault(t, tc.call(tok(&ua.UserNameIdentityToken{PolicyID: "username", UserName: "op", Password: []byte("pw")})), status.BadIdentityTokenRejected)
	subtest.WantFault(t, tc.call(tok(&ua.X509IdentityToken{PolicyID: "x509"})), status.BadIdentityTokenRejected)
	subtest.WantFault(t, tc.call(tok(&ua.IssuedIdentityToken{PolicyID: "jwt"})), status.BadIdentityTokenInvalid)
	subtest.WantFault(t, tc.call(tok(&ua.AnonymousIdentityToken{PolicyID: "nope"})), status.BadIdentityTokenInvalid)
	// A body of an unknown type stays raw: invalid.
	subtest.WantFault(t, tc.call(&ua.ActivateSessionRequest{UserIdentityToken: ua.ExtensionObject{
		TypeID: ua.NewNumericNodeID(3, 9), Encoding: ua.ExtensionObjectBinary, Raw: []byte{1, 2}}}), status.BadIdentityTokenInvalid)
	if d := s.Diagnostics(); d.SecurityRejectedSessionCount != 5 || d.RejectedSessionCount != 5 {
		t.Errorf("diagnostics %+v", d)
	}
	// A null token is anonymous.
	subtest.WantOK[ua.ActivateSessionResponse](t, tc.call(&ua.ActivateSessionRequest{}))
}

// namedUsers accepts user-name tokens of any name, and the anonymous
// token.
type namedUsers struct{}

func (namedUsers) Authenticate(token ua.Body) (Identity, error) {
	if t, ok := token.(*ua.UserNameIdentityToken); ok {
		return Identity{UserName: t.UserName, Roles: RolesOf(RoleObserver)}, nil
	}
	return AnonymousOnly{}.Authenticate(token)
}

// TestActivateOnAnotherChannelNeedsTheSameUser: a session moves to
// another channel only for the user it was activated for (OPC 10000-4
// §5.7.3); another user gets Bad_UserAccessDenied and nothing changes.
func TestActivateOnAnotherChannelNeedsTheSameUser(t *testing.T) {
	s := newTestServer(t, Config{Authenticator: namedUsers{}})
	user := func(name string) *ua.ActivateSessionRequest {
		b := &ua.UserNameIdentityToken{PolicyID: "username", UserName: name}
		return &ua.ActivateSessionRequest{UserIdentityToken: ua.ExtensionObject{TypeID: b.BinaryEncodingID(), Encoding: ua.ExtensionObjectBinary, Body: b}}
	}
	tc := newTestConn(t, s, 1)
	cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{}))
	tc.token = cs.AuthenticationToken
	subtest.WantOK[ua.ActivateSessionResponse](t, tc.call(user("alice")))
	read := &ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue)}}}

	other := newTestConn(t, s, 2)
	other.token = cs.AuthenticationToken
	subtest.WantFault(t, other.call(user("mallory")), status.BadUserAccessDenied)
	subtest.WantFault(t, other.call(&ua.ActivateSessionRequest{}), status.BadUserAccessDenied) // anonymous
	subtest.WantOK[ua.ReadResponse](t, tc.call(read))                                          // still alice's, on channel 1
	subtest.WantFault(t, other.call(read), status.BadSecureChannelIDInvalid)                   // not on channel 2

	subtest.WantOK[ua.ActivateSessionResponse](t, other.call(user("alice")))
	subtest.WantOK[ua.ReadResponse](t, other.call(read))
}

func TestRevisedSessionTimeout(t *testing.T) {
	s := newTestServer(t, Config{MinSessionTimeout: 10 * time.Second, MaxSessionTimeout: time.Hour})
	for _, tt := range []struct {
		ms   float64
		want time.Duration
	}{
		{0, time.Hour}, {-1, time.Hour}, {1, 10 * time.Second}, {30000, 30 * time.Second},
		{1e12, time.Hour}, {3600000, time.Hour}, {12.5e3, 12500 * time.Millisecond},
	} {
		if got := s.reviseTimeout(tt.ms); got != tt.want {
			t.Errorf("reviseTimeout(%v) = %v, want %v", tt.ms, got, tt.want)
		}
	}
}

// TestMaxSessions: with every session activated, one more CreateSession
// is Bad_TooManySessions.
func TestMaxSessions(t *testing.T) {
	s := newTestServer(t, Config{MaxSessions: 2})
	tc := newTestConn(t, s, 1)
	for range 2 {
		tc.openSession()
	}
	subtest.WantFault(t, tc.call(&ua.CreateSessionRequest{}), status.BadTooManySessions)
	if d := s.Diagnostics(); d.RejectedSessionCount != 1 || d.CurrentSessionCount != 2 {
		t.Errorf("diagnostics %+v", d)
	}
}

// TestFullSessionTableClosesOldestUnactivated: when the table is full, the
// oldest session not activated yet is closed to admit a new one
// (OPC 10000-4 §5.6.2); an activated session is never closed for it.
func TestFullSessionTableClosesOldestUnactivated(t *testing.T) {
	s := newTestServer(t, Config{MaxSessions: 3})
	active := newTestConn(t, s, 1)
	active.openSession()
	tc := newTestConn(t, s, 2)
	var tokens []ua.NodeID
	for range 3 { // the third takes the first one's place
		tokens = append(tokens, subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{})).AuthenticationToken)
	}
	activate := func(tok ua.NodeID) ua.Body {
		tc.token = tok
		return tc.call(subtest.AnonymousActivate())
	}
	subtest.WantFault(t, activate(tokens[0]), status.BadSessionIDInvalid) // closed for the fourth
	for _, tok := range tokens[1:] {
		subtest.WantOK[ua.ActivateSessionResponse](t, activate(tok))
	}
	subtest.WantFault(t, tc.call(&ua.CreateSessionRequest{}), status.BadTooManySessions) // all activated now
	if r := active.call(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue)}}}); subtest.FaultOf(r) != status.Good {
		t.Errorf("the activated session: %v", subtest.FaultOf(r))
	}
	if d := s.Diagnostics(); d.CurrentSessionCount != 3 || d.RejectedSessionCount != 1 {
		t.Errorf("diagnostics %+v", d)
	}
}

func TestSessionTimeoutWithClock(t *testing.T) {
	clk := subtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestServer(t, Config{Clock: clk.Now})
	tc := newTestConn(t, s, 1)
	tc.openSession() // 60 s
	idle := newTestConn(t, s, 2)
	idle.openSession()
	read := &ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_CurrentTime), AttributeID: 13}}}

	clk.Add(59 * time.Second)
	subtest.WantOK[ua.ReadResponse](t, tc.call(read))
	if n := s.sessions.expire(clk.Now()); n != 0 {
		t.Fatalf("%d sessions expired before their timeout", n)
	}
	clk.Add(2 * time.Second) // idle: 61 s, tc: 2 s
	if n := s.sessions.expire(clk.Now()); n != 1 {
		t.Fatalf("%d sessions expired, want 1", n)
	}
	subtest.WantFault(t, idle.call(read), status.BadSessionIDInvalid)
	subtest.WantOK[ua.ReadResponse](t, tc.call(read))
	if d := s.Diagnostics(); d.SessionTimeoutCount != 1 || d.CurrentSessionCount != 1 {
		t.Errorf("diagnostics %+v", d)
	}
}

// TestSessionServicesAreNotKept: the values of discovery and the session
// services, which come once a session, are not kept, nor is the size
// their responses (certificates, endpoints) gave the encode buffer.
func TestSessionServicesAreNotKept(t *testing.T) {
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: DefaultApplicationURI, Key: testkeys.RSA(2048)})
	if err != nil {
		t.Fatal(err)
	}
	own, _ := uasc.NewCredentials(der, key)
	s := newTestServer(t, Config{Security: &Security{Credentials: func() *uasc.Credentials { return own }, AllowInsecure: true}})
	tc := newTestConn(t, s, 1)
	subtest.WantOK[ua.GetEndpointsResponse](t, tc.call(&ua.GetEndpointsRequest{EndpointURL: "opc.tcp://localhost:4840"}))
	if !tc.c.trim || cap(tc.c.out) <= trimSize {
		t.Fatalf("GetEndpoints' response, %d bytes, fits the trimmed buffer: the test shows nothing", len(tc.c.out))
	}
	tc.openSession()
	for _, rid := range []uint32{id.GetEndpointsRequest_Encoding_DefaultBinary, id.CreateSessionRequest_Encoding_DefaultBinary, id.ActivateSessionRequest_Encoding_DefaultBinary} {
		if svc := serviceByRequest(rid); tc.c.vals[svc.index].req != nil {
			t.Errorf("the values of %s were kept", svc.name)
		}
	}
	read := &ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue)}}}
	subtest.WantOK[ua.ReadResponse](t, tc.call(read))
	if !tc.c.trim && cap(tc.c.out) > trimSize {
		t.Errorf("encode buffer of %d bytes after a Read, want at most %d", cap(tc.c.out), trimSize)
	}
	if svc := serviceByRequest(id.ReadRequest_Encoding_DefaultBinary); tc.c.vals[svc.index].req == nil {
		t.Error("the values of Read were not kept")
	}
}

// TestLargeRequestsAreNotKept: an operation array beyond MaxArrayLength
// is refused at its length field (Bad_EncodingLimitsExceeded); a request
// beyond keepSize is answered (here Bad_TooManyOperations) and its decoded
// values are not kept for the next request of the connection, while a
// small request's are.
func TestLargeRequestsAreNotKept(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	nodes := func(n int) []ua.ReadValueID {
		out := make([]ua.ReadValueID, n)
		for i := range out {
			out[i] = ua.ReadValueID{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue)}
		}
		return out
	}
	read := serviceByRequest(id.ReadRequest_Encoding_DefaultBinary)
	kept := func() bool { return tc.c.vals[read.index].req != nil }

	subtest.WantFault(t, tc.call(&ua.ReadRequest{NodesToRead: nodes(DefaultMaxArrayLength + 1)}), status.BadEncodingLimitsExceeded)
	if kept() {
		t.Error("the values of a refused large request were kept")
	}
	subtest.WantOK[ua.ReadResponse](t, tc.call(&ua.ReadRequest{NodesToRead: nodes(10)}))
	if !kept() {
		t.Error("the values of a small request were not kept")
	}
	subtest.WantFault(t, tc.call(&ua.ReadRequest{NodesToRead: nodes(5000)}), status.BadTooManyOperations)
	if kept() {
		t.Error("the values of a request beyond keepSize were kept")
	}
}

// TestSetupServicesAreNotKept: the values of the services that set
// subscriptions up (CreateSubscription, CreateMonitoredItems, ...), which
// come once an item, are not kept for the next request, however small;
// Publish's are.
func TestSetupServicesAreNotKept(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	sub := subtest.CreateSub(t, tc.call, 100, 10, 1000)
	wantItems(t, subtest.CreateItems(t, tc.call, sub, nodeItems(100, id.Server_ServerStatus_State, 100)...), 100)
	for _, rid := range []uint32{id.CreateSubscriptionRequest_Encoding_DefaultBinary, id.CreateMonitoredItemsRequest_Encoding_DefaultBinary} {
		if svc := serviceByRequest(rid); !svc.setup || tc.c.vals[svc.index].req != nil {
			t.Errorf("the values of %s were kept (set-up service: %v)", svc.name, svc.setup)
		}
	}
	if svc := serviceByRequest(id.PublishRequest_Encoding_DefaultBinary); svc.setup {
		t.Error("Publish is marked as a set-up service: its values would not be kept")
	}
}

// nodeItems returns n requests for Reporting items on the Value of node
// (namespace 0), sampled every si ms, client handles 0 to n-1.
func nodeItems(n int, node uint32, si float64) []ua.MonitoredItemCreateRequest {
	items := make([]ua.MonitoredItemCreateRequest, n)
	for i := range items {
		items[i] = ua.MonitoredItemCreateRequest{
			ItemToMonitor:       valueOf(ua.NewNumericNodeID(0, node)),
			MonitoringMode:      ua.MonitoringModeReporting,
			RequestedParameters: ua.MonitoringParameters{ClientHandle: uint32(i), SamplingInterval: si, QueueSize: 1, DiscardOldest: true},
		}
	}
	return items
}

// wantItems fails t unless there are n results, every one Good.
func wantItems(t *testing.T, results []ua.MonitoredItemCreateResult, n int) {
	t.Helper()
	if len(results) != n {
		t.Fatalf("%d results for %d items", len(results), n)
	}
	for i := range results {
		if results[i].StatusCode != status.Good {
			t.Fatalf("item %d of %d: %v", i, len(results), results[i].StatusCode)
		}
	}
}
