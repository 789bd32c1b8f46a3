package uasc

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Hand-written byte vectors of the UA-TCP messages and the secure
// conversation headers, field by field (OPC 10000-6 §7.1.2, §6.7.2).

// unhex decodes a vector written as hex with "//" comments.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	var clean strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVectorHello(t *testing.T) {
	want := unhex(t, `
		48 45 4c       // MessageType "HEL"
		46             // ChunkType 'F'
		2d 00 00 00    // MessageSize 45
		00 00 00 00    // ProtocolVersion 0
		00 00 01 00    // ReceiveBufferSize 65536
		00 20 00 00    // SendBufferSize 8192
		00 00 00 01    // MaxMessageSize 16 MiB
		00 00 00 00    // MaxChunkCount 0: no limit
		0d 00 00 00    // EndpointUrl length 13
		6f 70 63 2e 74 63 70 3a 2f 2f 67 77 31 // "opc.tcp://gw1"
	`)
	h := hello{ReceiveBufferSize: 65536, SendBufferSize: 8192, MaxMessageSize: 16 << 20, EndpointURL: "opc.tcp://gw1"}
	if got := appendHello(nil, &h); !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, want)
	}
	var d hello
	if err := d.decode(want[hdrLen:]); err != nil || d != h {
		t.Fatalf("decoded %+v, %v", d, err)
	}
	for i := range len(want) - hdrLen {
		if err := d.decode(want[hdrLen : hdrLen+i]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", i)
		}
	}
}

func TestVectorAcknowledge(t *testing.T) {
	want := unhex(t, `
		41 43 4b       // MessageType "ACK"
		46             // ChunkType 'F'
		1c 00 00 00    // MessageSize 28
		00 00 00 00    // ProtocolVersion 0
		00 20 00 00    // ReceiveBufferSize 8192
		ff ff 00 00    // SendBufferSize 65535
		00 00 00 01    // MaxMessageSize 16 MiB
		00 01 00 00    // MaxChunkCount 256
	`)
	a := acknowledge{0, 8192, 65535, 16 << 20, 256}
	if got := appendAcknowledge(nil, &a); !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, want)
	}
}

func TestVectorError(t *testing.T) {
	want := unhex(t, `
		45 52 52       // MessageType "ERR"
		46             // ChunkType 'F'
		14 00 00 00    // MessageSize 20
		00 00 7e 80    // Error 0x807E0000 Bad_TcpMessageTypeInvalid
		04 00 00 00    // Reason length 4
		6e 6f 70 65    // "nope"
	`)
	if got := AppendError(nil, status.BadTcpMessageTypeInvalid, "nope"); !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, want)
	}
	long := AppendError(nil, status.BadTcpInternalError, strings.Repeat("x", 5000))
	if len(long) != hdrLen+4+4+4096 {
		t.Fatalf("reason not cut to 4096 bytes: %d", len(long))
	}
}

func TestVectorMSG(t *testing.T) {
	want := unhex(t, `
		4d 53 47       // MessageType "MSG"
		46             // ChunkType 'F'
		1b 00 00 00    // MessageSize 27
		07 00 00 00    // SecureChannelId 7
		02 00 00 00    // TokenId 2 (symmetric security header)
		2a 00 00 00    // SequenceNumber 42
		05 00 00 00    // RequestId 5
		01 02 03       // body
	`)
	c := &Channel{id: 7, sendBufSize: 8192}
	c.s.tok = &token{id: 2, crypto: cryptoNone{}, maxBody: maxBodySize(8192, symHdrLen, cryptoNone{})}
	c.s.seq = 41
	got, err := c.appendMSG(nil, 5, []byte{1, 2, 3})
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nwant\n%x (%v)", got, want, err)
	}

	// Split: 8192-byte chunks carry 8192-24 body bytes.
	body := make([]byte, 8168+1)
	got, _ = c.appendMSG(nil, 6, body)
	if len(got) != 8192+25 || got[3] != 'C' || got[8192+3] != 'F' {
		t.Fatalf("split: %d bytes, chunk types %q %q", len(got), got[3], got[8192+3])
	}
	// An empty message is one final chunk with an empty body.
	got, _ = c.appendMSG(nil, 6, nil)
	if len(got) != 24 || got[3] != 'F' {
		t.Fatalf("empty: %x", got)
	}
}

func TestVectorOPN(t *testing.T) {
	// The client's OpenSecureChannel request under None, parsed by the
	// server.
	req := unhex(t, `
		4f 50 4e       // MessageType "OPN"
		46             // ChunkType 'F'
		84 00 00 00    // MessageSize 132
		00 00 00 00    // SecureChannelId 0 (Issue)
		2f 00 00 00    // SecurityPolicyUri length 47
		68 74 74 70 3a 2f 2f 6f 70 63 66 6f 75 6e 64 61 74 69 6f 6e 2e 6f 72 67
		2f 55 41 2f 53 65 63 75 72 69 74 79 50 6f 6c 69 63 79 23 4e 6f 6e 65
		               // "http://opcfoundation.org/UA/SecurityPolicy#None"
		ff ff ff ff    // SenderCertificate null
		ff ff ff ff    // ReceiverCertificateThumbprint null
		01 00 00 00    // SequenceNumber 1
		09 00 00 00    // RequestId 9
		01 00 be 01    // TypeId: FourByte NodeId i=446 OpenSecureChannelRequest
		00 00          //   RequestHeader.AuthenticationToken i=0
		00 00 00 00 00 00 00 00 // Timestamp
		09 00 00 00    //   RequestHandle 9
		00 00 00 00    //   ReturnDiagnostics
		ff ff ff ff    //   AuditEntryId null
		00 00 00 00    //   TimeoutHint
		00 00 00       //   AdditionalHeader: null ExtensionObject
		00 00 00 00    // ClientProtocolVersion 0
		00 00 00 00    // RequestType Issue
		01 00 00 00    // SecurityMode None
		ff ff ff ff    // ClientNonce null
		60 ea 00 00    // RequestedLifetime 60000 ms
	`)
	tc := &testClient{chanID: 0, seq: 0}
	if got := tc.opnChunk(ua.SecurityTokenRequestTypeIssue, 9, 60000); !bytes.Equal(got, req) {
		t.Fatalf("test client encodes\n%x\nwant\n%x", got, req)
	}

	// The server's response: the same asymmetric header, then the
	// response.
	c := &Channel{id: 7, sendBufSize: 8192, policy: PolicyNone}
	c.s.seq = 0
	resp := ua.OpenSecureChannelResponse{SecurityToken: ua.ChannelSecurityToken{ChannelID: 7, TokenID: 1, RevisedLifetime: 60000}}
	if err := c.appendOPN(9, &resp, AsymmetricResult{Crypto: cryptoNone{}}); err != nil {
		t.Fatal(err)
	}
	hdr := unhex(t, `
		4f 50 4e 46    // "OPN" 'F'
		87 00 00 00    // MessageSize 135
		07 00 00 00    // SecureChannelId 7
		2f 00 00 00    // SecurityPolicyUri length 47, then the URI
	`)
	got := c.s.buf
	if !bytes.Equal(got[:len(hdr)], hdr) {
		t.Fatalf("response header %x, want %x", got[:len(hdr)], hdr)
	}
	tail := unhex(t, `
		ff ff ff ff    // SenderCertificate null
		ff ff ff ff    // ReceiverCertificateThumbprint null
		01 00 00 00    // SequenceNumber 1
		09 00 00 00    // RequestId 9
		01 00 c1 01    // TypeId: i=449 OpenSecureChannelResponse
	`)
	off := len(hdr) + 47
	if !bytes.Equal(got[off:off+len(tail)], tail) {
		t.Fatalf("response after the URI %x, want %x", got[off:off+len(tail)], tail)
	}
}
