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
func (m *memTrust) Remove(string, bool) error                                { return errors.New("none") }
func (m *memTrust) Rejected() ([][]byte, error)                              { return nil, nil }
func (m *memTrust) SigningRequest(*pkix.Name, bool) ([]byte, error)          { return []byte("csr"), nil }
func (m *memTrust) UpdateCertificate([]byte, [][]byte, []byte, string) error { return nil }

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
	s := newTestServer(t, Config{Authenticator: admins{}, Security: &Security{
		Credentials: func() *uasc.Credentials { return nil }, AllowInsecure: true, TrustStore: ts,
	}})
	session := func(chID uint32, mode ua.MessageSecurityMode) *testConn {
		tc := newTestConn(t, s, chID)
		fc := tc.c.ch.(*fakeChannel)
		fc.policy, fc.mode = "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256", mode
		cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{}))
		tc.token = cs.AuthenticationToken
		subtest.WantOK[ua.ActivateSessionResponse](t, tc.call(&ua.ActivateSessionRequest{}))
		return tc
	}
	const tl = id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList
	call := func(tc *testConn, method uint32, args ...any) (ua.StatusCode, []ua.Variant) {
		t.Helper()
		var in []ua.Variant
		for _, a := range args {
			in = append(in, ua.MustVariant(a))
		}
		req := &ua.CallRequest{MethodsToCall: []ua.CallMethodRequest{{
			ObjectID: ua.NewNumericNodeID(0, tl), MethodID: ua.NewNumericNodeID(0, method), InputArguments: in}}}
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
