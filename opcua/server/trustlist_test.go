package server

import (
	"bytes"
	"crypto/x509/pkix"
	"errors"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// memTrust is a TrustStore in memory.
type memTrust struct{ lists [4][][]byte }

func (m *memTrust) Lists() ([4][][]byte, error) { return m.lists, nil }
func (m *memTrust) Replace(masks uint32, l [4][][]byte) error {
	for i := range l {
		if masks&(1<<i) != 0 {
			m.lists[i] = l[i]
		}
	}
	return nil
}
func (m *memTrust) Add(der []byte, trusted bool) error {
	if len(der) == 0 {
		return errors.New("empty")
	}
	m.lists[0] = append(m.lists[0], der)
	return nil
}
func (m *memTrust) Remove(string, bool) error   { return errors.New("none") }
func (m *memTrust) Rejected() ([][]byte, error) { return nil, nil }
func (m *memTrust) SigningRequest(string, *pkix.Name, bool) ([]byte, error) {
	return []byte("csr"), nil
}
func (m *memTrust) UpdateCertificate(string, []byte, [][]byte, []byte, string) error {
	return nil
}

// admins accepts the anonymous user as a SecurityAdmin.
type admins struct{}

func (admins) Authenticate(ua.Body) (Identity, error) {
	return Identity{Anonymous: true, Roles: RolesOf(RoleSecurityAdmin)}, nil
}

// TestTrustListFile: what a client may do with the TrustList file, and
// what it may not: read a write handle, open a second writer beside the
// first, use another session's handle, write beyond MaxTrustListSize,
// update from a handle opened for reading, or write what does not
// decode.
func TestTrustListFile(t *testing.T) {
	ts := &memTrust{lists: [4][][]byte{{[]byte("cert-a")}}}
	session, callOn := trustFixture(t, &Security{
		Credentials: func() *uasc.Credentials { return nil }, AllowInsecure: true, TrustStore: ts,
	})
	call := func(tc *testConn, method uint32, args ...any) (ua.StatusCode, []ua.Variant) {
		t.Helper()
		return callOn(tc, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList, method, args...)
	}
	a := session(1, ua.MessageSecurityModeSignAndEncrypt)
	b := session(2, ua.MessageSecurityModeSignAndEncrypt)
	signOnly := session(3, ua.MessageSecurityModeSign)

	if st, _ := call(signOnly, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Open, uint8(1)); st != status.BadUserAccessDenied {
		t.Errorf("Open over Sign: %v, want Bad_UserAccessDenied", st)
	}
	if st, _ := call(a, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Open, uint8(2)); st != status.BadInvalidArgument {
		t.Errorf("Open for writing without EraseExisting: %v", st)
	}
	st, out := call(a, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Open, uint8(6))
	if st != status.Good {
		t.Fatalf("Open for writing: %v", st)
	}
	h, _ := out[0].Uint32()
	if st, _ := call(b, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Open, uint8(1)); st != status.BadInvalidState {
		t.Errorf("a reader beside the writer: %v, want Bad_InvalidState", st)
	}
	if st, _ := call(a, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Read, h, int32(10)); st != status.BadInvalidArgument {
		t.Errorf("Read of a write handle: %v", st)
	}
	if st, _ := call(b, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Write, h, []byte{1}); st != status.BadInvalidArgument {
		t.Errorf("another session's handle: %v", st)
	}
	if st, _ := call(a, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Write, h, make([]byte, MaxTrustListSize+1)); st != status.BadEncodingLimitsExceeded {
		t.Errorf("a write beyond MaxTrustListSize: %v", st)
	}
	if st, _ := call(a, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Write, h, []byte("not a trust list")); st != status.Good {
		t.Errorf("Write: %v", st)
	}
	if st, _ := call(a, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_CloseAndUpdate, h); st != status.BadDecodingError {
		t.Errorf("CloseAndUpdate of garbage: %v, want Bad_DecodingError", st)
	}
	if len(ts.lists[0]) != 1 {
		t.Fatal("a failed update changed the lists")
	}
	// The handle is gone after CloseAndUpdate; a reader may open.
	st, out = call(b, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_OpenWithMasks, uint32(1))
	if st != status.Good {
		t.Fatalf("OpenWithMasks: %v", st)
	}
	rh, _ := out[0].Uint32()
	if st, _ := call(b, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_CloseAndUpdate, rh); st != status.BadInvalidState {
		t.Errorf("CloseAndUpdate of a read handle: %v, want Bad_InvalidState", st)
	}
	st, out = call(b, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_OpenWithMasks, uint32(1))
	rh, _ = out[0].Uint32()
	st, out = call(b, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Read, rh, int32(1<<20))
	data, _ := out[0].ByteString()
	var got ua.TrustListDataType
	got.Decode(ua.NewDecoder(data))
	if st != status.Good || got.SpecifiedLists != 1 || len(got.TrustedCertificates) != 1 || !bytes.Equal(got.TrustedCertificates[0], []byte("cert-a")) {
		t.Errorf("the file read: %v %+v", st, got)
	}
}

// trustFixture is a server with sec whose sessions are security
// administrators: session opens one on channel chID with mode; call
// calls method on object with args.
func trustFixture(t *testing.T, sec *Security) (session func(chID uint32, mode ua.MessageSecurityMode) *testConn,
	call func(tc *testConn, object, method uint32, args ...any) (ua.StatusCode, []ua.Variant)) {
	s := newTestServer(t, Config{Authenticator: admins{}, Security: sec})
	session = func(chID uint32, mode ua.MessageSecurityMode) *testConn {
		tc := newTestConn(t, s, chID)
		fc := tc.c.ch.(*fakeChannel)
		fc.policy, fc.mode = "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256", mode
		cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{}))
		tc.token = cs.AuthenticationToken
		subtest.WantOK[ua.ActivateSessionResponse](t, tc.call(&ua.ActivateSessionRequest{}))
		return tc
	}
	call = func(tc *testConn, object, method uint32, args ...any) (ua.StatusCode, []ua.Variant) {
		t.Helper()
		var in []ua.Variant
		for _, a := range args {
			in = append(in, ua.MustVariant(a))
		}
		req := &ua.CallRequest{MethodsToCall: []ua.CallMethodRequest{{
			ObjectID: ua.NewNumericNodeID(0, object), MethodID: ua.NewNumericNodeID(0, method), InputArguments: in}}}
		req.RequestHeader.AuthenticationToken = tc.token
		var resp ua.Body
		if out := tc.c.handle(ua.AppendMessage(nil, req), time.Time{}); len(out) > 0 {
			var err error
			if resp, err = ua.DecodeMessage(ua.NewDecoder(out)); err != nil {
				t.Fatal(err)
			}
		} else {
			resp = tc.async() // a Call is answered from a goroutine of its own
		}
		r := subtest.WantOK[ua.CallResponse](t, resp)
		return r.Results[0].StatusCode, r.Results[0].OutputArguments
	}
	return session, call
}

// TestUserTokenTrustList: the DefaultUserTokenGroup's TrustList manages
// the X.509 user certificates' trust list as the application group's
// manages the application's, on its own lists and handles; without a
// user trust store it is Bad_NotSupported. CancelChanges has nothing to
// cancel: Good for a security administrator only.
func TestUserTokenTrustList(t *testing.T) {
	app := &memTrust{lists: [4][][]byte{{[]byte("app-cert")}}}
	user := &memTrust{}
	session, call := trustFixture(t, &Security{
		Credentials: func() *uasc.Credentials { return nil }, AllowInsecure: true, TrustStore: app, UserTrustStore: user,
	})
	const ug = id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList
	a := session(1, ua.MessageSecurityModeSignAndEncrypt)
	signOnly := session(2, ua.MessageSecurityModeSign)
	if st, _ := call(signOnly, ug, id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_AddCertificate, []byte("user-ca"), true); st != status.BadUserAccessDenied {
		t.Errorf("AddCertificate over Sign: %v, want Bad_UserAccessDenied", st)
	}
	if st, _ := call(a, ug, id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_AddCertificate, []byte("user-ca"), true); st != status.Good {
		t.Fatalf("AddCertificate: %v", st)
	}
	if len(user.lists[0]) != 1 || len(app.lists[0]) != 1 {
		t.Fatalf("user lists %q, application lists %q: the certificate went to the wrong group", user.lists[0], app.lists[0])
	}
	// Open on the user group and on the application group at once: each
	// group has its own handles.
	st, out := call(a, ug, id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_Open, uint8(1))
	if st != status.Good {
		t.Fatalf("Open: %v", st)
	}
	h, _ := out[0].Uint32()
	if st, _ := call(a, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Open, uint8(6)); st != status.Good {
		t.Errorf("the application group's writer beside the user group's reader: %v", st)
	}
	st, out = call(a, ug, id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_Read, h, int32(1<<20))
	data, _ := out[0].ByteString()
	var got ua.TrustListDataType
	got.Decode(ua.NewDecoder(data))
	if st != status.Good || len(got.TrustedCertificates) != 1 || string(got.TrustedCertificates[0]) != "user-ca" {
		t.Errorf("the user group's file read: %v %+v", st, got)
	}
	if st, _ := call(a, id.ServerConfiguration, id.ServerConfiguration_CancelChanges); st != status.Good {
		t.Errorf("CancelChanges by a security administrator: %v", st)
	}
	if st, _ := call(signOnly, id.ServerConfiguration, id.ServerConfiguration_CancelChanges); st != status.BadUserAccessDenied {
		t.Errorf("CancelChanges over Sign: %v, want Bad_UserAccessDenied", st)
	}

	noUser, call2 := trustFixture(t, &Security{
		Credentials: func() *uasc.Credentials { return nil }, AllowInsecure: true, TrustStore: app,
	})
	if st, _ := call2(noUser(1, ua.MessageSecurityModeSignAndEncrypt), ug,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_OpenWithMasks, uint32(15)); st != status.BadNotSupported {
		t.Errorf("the user group without a user trust store: %v, want Bad_NotSupported", st)
	}
}
