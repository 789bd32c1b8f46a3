package server_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	gid "github.com/gopcua/opcua/id"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// reverseListener is a client's port for reverse connections.
func reverseListener(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, "opc.tcp://" + ln.Addr().String()
}

// acceptReverse takes the server's next connection and reads its
// ReverseHello.
func acceptReverse(t *testing.T, ln net.Listener) (net.Conn, string, string) {
	t.Helper()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(time.Minute))
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetReadDeadline(time.Now().Add(time.Minute))
	var hdr [8]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		t.Fatal(err)
	}
	size := binary.LittleEndian.Uint32(hdr[4:])
	if string(hdr[:4]) != "RHEF" || size < 16 || size > 8+2*(4+4096) {
		t.Fatalf("first message %q of %d bytes, want a ReverseHello", hdr[:4], size)
	}
	body := make([]byte, size-8)
	if _, err := io.ReadFull(nc, body); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Time{})
	var d ua.Decoder
	d.Reset(body)
	uri, url := d.ReadString(), d.ReadString()
	if d.Err() != nil || d.Remaining() != 0 {
		t.Fatalf("ReverseHello body %x", body)
	}
	return nc, uri, url
}

// relay lets a client that can only dial (gopcua) use a socket the server
// opened: it listens on a port of its own and copies both ways between
// its first connection and nc.
func relay(t *testing.T, nc net.Conn) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() { io.Copy(nc, c); nc.Close() }()
		io.Copy(c, nc)
		c.Close()
	}()
	return "opc.tcp://" + ln.Addr().String()
}

func reverseState(srv *server.Server, url string) server.ReverseState {
	for _, st := range srv.ReverseStates() {
		if st.URL == url {
			return st
		}
	}
	return server.ReverseState{}
}

func TestReverseConnect(t *testing.T) {
	srv, endpoint := startServer(t, server.Config{ApplicationURI: "urn:edged:reverse-test"})
	ln, target := reverseListener(t)
	if err := srv.SetReverseConnect([]server.ReverseTarget{{URL: target, MaxConnections: 2}}); err != nil {
		t.Fatal(err)
	}
	nc, uri, url := acceptReverse(t, ln)
	if uri != "urn:edged:reverse-test" || url != endpoint {
		t.Fatalf("ReverseHello %q %q, want %q %q", uri, url, "urn:edged:reverse-test", endpoint)
	}
	ctx := testCtx(t)
	c := connect(t, ctx, relay(t, nc))
	rr, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
		{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerStatus_State), AttributeID: gua.AttributeIDValue}}})
	if err != nil || rr.Results[0].Status != gua.StatusOK {
		t.Fatalf("read over the reverse connection: %v %+v", err, rr)
	}
	// The client took the first socket: the server serves it and dials
	// the next at once.
	nc2, _, _ := acceptReverse(t, ln)
	waitFor(t, "one connection served, the next one waiting", func() bool {
		st := reverseState(srv, target)
		return st.Connections == 1 && st.State == "waiting" && st.Opened == 1
	})
	// The second one taken too: the bound of 2 is reached, no third dial.
	c2 := connect(t, ctx, relay(t, nc2))
	defer c2.Close(ctx)
	waitFor(t, "the target full", func() bool {
		st := reverseState(srv, target)
		return st.Connections == 2 && st.State == "full"
	})
	// One ends: the server dials again.
	c.Close(ctx)
	acceptReverse(t, ln)
	waitFor(t, "the next one waiting", func() bool {
		st := reverseState(srv, target)
		return st.Connections == 1 && st.State == "waiting"
	})
	// The target removed: its connections close, its state goes.
	if err := srv.SetReverseConnect(nil); err != nil {
		t.Fatal(err)
	}
	if len(srv.ReverseStates()) != 0 {
		t.Fatalf("states %+v after removing the target", srv.ReverseStates())
	}
	// Its connections close on a goroutine of their own (a channel's
	// Close may wait for a client that does not read).
	waitFor(t, "the removed target's connection closed", func() bool {
		_, err := c2.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
			{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerStatus_State), AttributeID: gua.AttributeIDValue}}})
		return err != nil
	})
}

// A client that answers the ReverseHello with an Error is left alone for
// a while; one that is not there is dialled again with back-off.
func TestReverseConnectRefusedAndRetried(t *testing.T) {
	srv, _ := startServer(t, server.Config{})
	ln, target := reverseListener(t)
	gone, _ := reverseListener(t)
	absent := "opc.tcp://" + gone.Addr().String()
	gone.Close()
	if err := srv.SetReverseConnect([]server.ReverseTarget{{URL: target}, {URL: absent}}); err != nil {
		t.Fatal(err)
	}
	nc, _, _ := acceptReverse(t, ln)
	if _, err := nc.Write(uasc.AppendError(nil, status.BadTcpMessageTypeInvalid, "not expecting this server")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the target refused", func() bool { return reverseState(srv, target).State == "refused" })
	st := reverseState(srv, target)
	if wait := time.Until(st.RetryAt); wait < server.ReverseRefusedWait*3/4 || st.LastError == "" || st.Connections != 0 {
		t.Fatalf("refused: %+v (next dial in %v, want about %v)", st, wait, server.ReverseRefusedWait)
	}
	var buf [1]byte
	nc.SetReadDeadline(time.Now().Add(time.Minute))
	if n, err := nc.Read(buf[:]); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("after the client's Error the server sent %d bytes (%v); want it to close without an answer", n, err)
	}
	waitFor(t, "the absent target retried", func() bool {
		st := reverseState(srv, absent)
		return st.State == "retrying" && st.LastError != ""
	})
	if wait := time.Until(reverseState(srv, absent).RetryAt); wait > server.ReverseRetryMax*6/5 {
		t.Fatalf("next dial of the absent target in %v, above the bound %v", wait, server.ReverseRetryMax)
	}
}

func TestReverseConnectTargetsChecked(t *testing.T) {
	srv, _ := startServer(t, server.Config{})
	for _, ts := range [][]server.ReverseTarget{
		{{URL: "http://127.0.0.1:4840"}},
		{{URL: "opc.tcp://127.0.0.1"}},
		{{URL: "opc.tcp://:4840"}},
		{{URL: "opc.tcp://127.0.0.1:4840"}, {URL: "opc.tcp://127.0.0.1:4840"}},
		{{URL: "opc.tcp://127.0.0.1:4840", MaxConnections: -1}},
	} {
		if err := srv.SetReverseConnect(ts); err == nil {
			t.Errorf("%+v accepted", ts)
		}
	}
	if len(srv.ReverseStates()) != 0 {
		t.Fatalf("a refused list left targets: %+v", srv.ReverseStates())
	}
}
