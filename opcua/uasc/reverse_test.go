package uasc

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// reverseTCP has the server dial a loopback listener of the test client
// and run OpenReverse on the connection.
func reverseTCP(t *testing.T, serverURI, endpointURL string) (*testClient, <-chan opened) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	res := make(chan opened, 1)
	go func() {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			res <- opened{nil, err}
			return
		}
		ch, err := OpenReverse(context.Background(), nc, &Config{}, serverURI, endpointURL)
		res <- opened{ch, err}
	}()
	cc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return newTestClient(t, cc), res
}

// readReverseHello reads the ReverseHello the server sent first.
func (tc *testClient) readReverseHello(t *testing.T) (string, string) {
	t.Helper()
	b := tc.mustChunk("RHE")
	if b[3] != 'F' || int(binary.LittleEndian.Uint32(b[4:8])) != len(b) {
		t.Fatalf("ReverseHello header %q", b[:8])
	}
	var d ua.Decoder
	d.Reset(b[hdrLen:])
	uri, url := d.ReadString(), d.ReadString()
	if d.Err() != nil || d.Remaining() != 0 {
		t.Fatalf("ReverseHello body %x", b[hdrLen:])
	}
	return uri, url
}

func TestReverseHandshake(t *testing.T) {
	tc, res := reverseTCP(t, "urn:edged:test", "opc.tcp://gateway:4840")
	uri, url := tc.readReverseHello(t)
	if uri != "urn:edged:test" || url != "opc.tcp://gateway:4840" {
		t.Fatalf("ReverseHello %q %q", uri, url)
	}
	h := defaultHello()
	h.EndpointURL = url
	tc.open(h, 60000)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.ch.Close(status.Good, "")
	done := echo(r.ch)
	tc.request(3, []byte("over the server's socket"))
	if id, got, _ := tc.response(); id != 3 || string(got) != "over the server's socket" {
		t.Fatalf("got %d %q", id, got)
	}
	tc.write(tc.symChunk("CLO", 'F', 4, ua.AppendMessage(nil, &ua.CloseSecureChannelRequest{})))
	if err := <-done; err != ErrClosed {
		t.Fatal(err)
	}
}

// A client that does not take reverse connections answers with an Error:
// OpenReverse reports it as a *PeerError and sends nothing back.
func TestReverseRefused(t *testing.T) {
	tc, res := reverseTCP(t, "urn:edged:test", "opc.tcp://gateway:4840")
	tc.readReverseHello(t)
	tc.write(AppendError(nil, status.BadTcpMessageTypeInvalid, "no reverse connect here"))
	err := openErr(t, res)
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Code != status.BadTcpMessageTypeInvalid || pe.Reason != "no reverse connect here" {
		t.Fatalf("error %v, want the client's Error", err)
	}
	tc.expectEOF()
}

// An Error on a connection the client opened is still a protocol
// violation, and so is a malformed Error after a ReverseHello.
func TestErrorInsteadOfHello(t *testing.T) {
	cc, res := serveTCP(t, &Config{})
	tc := newTestClient(t, cc)
	tc.write(AppendError(nil, status.BadTcpMessageTypeInvalid, "x"))
	wantStatus(t, openErr(t, res), status.BadTcpMessageTypeInvalid)
	tc.expectError(status.BadTcpMessageTypeInvalid)

	tc, res = reverseTCP(t, "urn:edged:test", "opc.tcp://gateway:4840")
	tc.readReverseHello(t)
	bad := AppendError(nil, status.BadTcpMessageTypeInvalid, "x")
	bad = append(bad, 0) // a byte past the reason
	binary.LittleEndian.PutUint32(bad[4:], uint32(len(bad)))
	tc.write(bad)
	var pe *PeerError
	if err := openErr(t, res); errors.As(err, &pe) || !errors.Is(err, status.BadTcpMessageTypeInvalid) {
		t.Fatalf("malformed Error: %v", err)
	}
}

func TestReverseHelloTooLong(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	if _, err := OpenReverse(context.Background(), a, &Config{}, strings.Repeat("u", 4097), "opc.tcp://x:1"); err == nil {
		t.Fatal("a ServerUri of 4097 bytes was sent")
	}
}
