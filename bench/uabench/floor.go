package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"
	"time"

	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// The floor of bench-peer: bench/uabench/peer/floor_server.c, a server
// that does nothing an OPC UA server must do but frame its answers. It
// answers Hello, an OpenSecureChannel of SecurityPolicy None, and the
// requests of the Read loads (CreateSession, ActivateSession, Read,
// CloseSession) with canned responses, patching only the request id, the
// sequence number and the request handle. Its CPU per Read is what the
// kernel and one epoll loop cost: how far above it a server is, is the
// server's own work. `uabench floorgen FILE` writes the canned responses,
// encoded by our codec, for it to load:
//
//	repeated: uint32 request type (the 4-byte NodeId's encoding, LE),
//	          uint32 length, the response message (type NodeId, body)
//
// The OpenSecureChannel response is the record of request type
// OpenSecureChannelRequest.

// floorResponses are the canned responses, by the request's type.
func floorResponses() []struct {
	req  uint16
	resp ua.Body
} {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hdr := ua.ResponseHeader{Timestamp: t}
	value := ua.DataValue{SourceTimestamp: t, ServerTimestamp: t}
	value.Value.SetUint32(42)
	return []struct {
		req  uint16
		resp ua.Body
	}{
		{id.OpenSecureChannelRequest_Encoding_DefaultBinary, &ua.OpenSecureChannelResponse{ResponseHeader: hdr,
			SecurityToken: ua.ChannelSecurityToken{ChannelID: 1, TokenID: 1, CreatedAt: t, RevisedLifetime: 3600000}}},
		{id.CreateSessionRequest_Encoding_DefaultBinary, &ua.CreateSessionResponse{ResponseHeader: hdr,
			SessionID: ua.NewNumericNodeID(1, 1), AuthenticationToken: ua.NewNumericNodeID(1, 2), RevisedSessionTimeout: 60000,
			ServerEndpoints: []ua.EndpointDescription{{
				EndpointURL: "opc.tcp://127.0.0.1", SecurityMode: ua.MessageSecurityModeNone,
				SecurityPolicyURI:   "http://opcfoundation.org/UA/SecurityPolicy#None",
				UserIdentityTokens:  []ua.UserTokenPolicy{{PolicyID: "anonymous", TokenType: ua.UserTokenTypeAnonymous}},
				TransportProfileURI: "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary",
			}}}},
		{id.ActivateSessionRequest_Encoding_DefaultBinary, &ua.ActivateSessionResponse{ResponseHeader: hdr}},
		{id.ReadRequest_Encoding_DefaultBinary, &ua.ReadResponse{ResponseHeader: hdr, Results: []ua.DataValue{value}}},
		{id.CloseSessionRequest_Encoding_DefaultBinary, &ua.CloseSessionResponse{ResponseHeader: hdr}},
	}
}

// floorGen writes the canned responses to w.
func floorGen(w io.Writer) error {
	var b []byte
	for _, r := range floorResponses() {
		msg := ua.AppendMessage(nil, r.resp)
		b = binary.LittleEndian.AppendUint32(b, uaclient.FourByteID(r.req))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(msg)))
		b = append(b, msg...)
	}
	_, err := w.Write(b)
	return err
}

// floorGenRole runs `uabench floorgen FILE`.
func floorGenRole(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("uabench floorgen: want one argument, the file to write")
	}
	f, err := os.Create(args[0])
	if err != nil {
		return err
	}
	if err := floorGen(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// aaMargin is the A/A margin of a figure: how far the ratio of its
// medians in edged's two runs of each round is from 1.
func aaMargin(a, b []*serverRun, get func(r *serverRun, i int) float64) float64 {
	ma := median(a, func(r *serverRun) float64 { return get(r, 0) })
	mb := median(b, func(r *serverRun) float64 { return get(r, 0) })
	return math.Abs(ma/mb - 1)
}

// floorReport prints the Read loads' figures of edged, its A/A run, the
// peer and the floor side by side, and each server's distance to the
// floor.
func floorReport(w io.Writer, f peerFlags, runs [2][]*serverRun, extra extraRuns) {
	if len(extra.floor) == 0 && len(extra.aa) == 0 {
		return
	}
	cols := []struct {
		name string
		rs   []*serverRun
	}{{f.servers[0].name, runs[0]}, {f.servers[0].name + " (A/A)", extra.aa}, {f.servers[1].name, runs[1]}, {f.floor.name, extra.floor}}
	type row struct {
		phase, name, unit string
		get               func(r *serverRun) float64
	}
	rows := []row{
		{"open", fmt.Sprintf("open loop, %d Reads/s over %d connections: server CPU per Read net of its idle", f.openRate, f.openConns), "µs",
			func(r *serverRun) float64 { return r.open.cpuPerRead(r.idleCPU) }},
		{"open", "same, round trip p50", "µs", func(r *serverRun) float64 { return us(r.open.p50) }},
		{"one", "1×1 Read round trip p50", "µs", func(r *serverRun) float64 { return us(r.one.p50) }},
		{"one", "1×1 Read round trip p99", "µs", func(r *serverRun) float64 { return us(r.one.p99) }},
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "\n| Read loads, with the floor")
	for _, c := range cols {
		fmt.Fprintf(tw, "\t| %s", c.name)
	}
	fmt.Fprintln(tw, "\t|")
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t|")
	for _, r := range rows {
		if !f.runs(r.phase) {
			continue
		}
		fmt.Fprintf(tw, "| %s", r.name)
		for _, c := range cols {
			if len(c.rs) == 0 {
				fmt.Fprint(tw, "\t| –")
				continue
			}
			vs := make([]float64, len(c.rs))
			for k, x := range c.rs {
				vs[k] = r.get(x)
			}
			fmt.Fprintf(tw, "\t| %s", spanOf(vs, r.unit))
		}
		fmt.Fprintln(tw, "\t|")
	}
	tw.Flush()
	if f.runs("open") && len(extra.floor) > 0 {
		cpu := func(rs []*serverRun) float64 {
			return median(rs, func(r *serverRun) float64 { return r.open.cpuPerRead(r.idleCPU) })
		}
		fl := cpu(extra.floor)
		for i := range runs {
			v := cpu(runs[i])
			fmt.Fprintf(w, "Open loop: %s spends %s µs of CPU per Read above the floor's %s (%.2f× the floor).\n",
				f.servers[i].name, fmtNum(v-fl), fmtNum(fl), v/fl)
		}
	}
	if len(extra.aa) > 0 && f.runs("one") {
		for _, q := range []struct {
			name string
			get  func(r *serverRun, i int) float64
		}{{"p50", func(r *serverRun, i int) float64 { return us(r.one.p50) }}, {"p99", func(r *serverRun, i int) float64 { return us(r.one.p99) }}} {
			fmt.Fprintf(w, "1×1 %s: A/A margin (edged's two runs) %.2f.\n", q.name, aaMargin(runs[0], extra.aa, q.get))
		}
	}
}
