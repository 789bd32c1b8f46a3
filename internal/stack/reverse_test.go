package stack

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/binding"
	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

// listenReverse is a client's port for reverse connections.
func listenReverse(t *testing.T) (*net.TCPListener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.(*net.TCPListener), "opc.tcp://" + ln.Addr().String()
}

// acceptRHE takes the server's next connection and checks that it starts
// with a ReverseHello.
func acceptRHE(t *testing.T, ln *net.TCPListener) net.Conn {
	t.Helper()
	ln.SetDeadline(time.Now().Add(time.Minute))
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetReadDeadline(time.Now().Add(time.Minute))
	var hdr [8]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil || string(hdr[:4]) != "RHEF" {
		t.Fatalf("first bytes %q (%v), want a ReverseHello", hdr, err)
	}
	if _, err := io.CopyN(io.Discard, nc, int64(binary.LittleEndian.Uint32(hdr[4:]))-8); err != nil {
		t.Fatal(err)
	}
	return nc
}

// TestReverseConnectLive: the clients of the configuration's
// opcua.reverse_connect and of Config.ReverseConnect are dialled from the
// start; a configuration change adds and removes them live; the
// diagnostics say what each does.
func TestReverseConnectLive(t *testing.T) {
	lnA, urlA := listenReverse(t)
	lnB, urlB := listenReverse(t)
	lnC, urlC := listenReverse(t)
	conf := pconfig.Simulator()
	conf.OPCUA = &pconfig.OPCUA{ReverseConnect: []pconfig.ReverseConnect{{URL: urlA, MaxConnections: 2}, {URL: urlB}}}
	st, err := New(Config{Plant: &conf, Simulator: &sim.Options{}, ReverseConnect: []string{urlB}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	a := acceptRHE(t, lnA)
	acceptRHE(t, lnB)
	if n := len(st.Server.ReverseStates()); n != 2 {
		t.Fatalf("%d targets, want 2 (a flag's URL that the document lists too is taken once)", n)
	}
	as := st.Server.AddressSpace()
	dns, _ := as.NamespaceIndex(binding.DiagnosticsNamespaceURI)
	states := func() string {
		var rc addrspace.ReadContext
		var dv ua.DataValue
		as.Read(&rc, &ua.ReadValueID{NodeID: ua.NewStringNodeID(dns, "ReverseConnect.States"), AttributeID: uint32(ua.AttributeIDValue)}, ua.TimestampsToReturnBoth, &dv)
		s, _ := dv.Value.Value().(string)
		return s
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(states(), urlA+": waiting"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Diagnostics/ReverseConnect.States %q", states())
		}
	}

	next := pconfig.Simulator()
	next.OPCUA = &pconfig.OPCUA{ReverseConnect: []pconfig.ReverseConnect{{URL: urlC}}}
	if err := st.Apply(context.Background(), &next); err != nil {
		t.Fatal(err)
	}
	acceptRHE(t, lnC)
	var got []string
	for _, s := range st.Server.ReverseStates() {
		got = append(got, s.URL)
	}
	slices.Sort(got)
	want := []string{urlB, urlC}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("targets %v after the change, want %s (the document's) and %s (the flag's)", got, urlC, urlB)
	}
	// A's waiting connection was closed with the target.
	var b [1]byte
	if _, err := a.Read(b[:]); err == nil {
		t.Fatal("the removed target's connection is still open")
	}
}
