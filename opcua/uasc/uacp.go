package uasc

import (
	"encoding/binary"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// The OPC UA Connection Protocol, UA-TCP (OPC 10000-6 §7.1).
//
// Every message, UA-TCP or secure conversation, starts with the same
// 8-byte header (§7.1.2.2):
//
//	MessageType  Byte[3]  "HEL" "ACK" "ERR" "RHE" | "OPN" "MSG" "CLO"
//	ChunkType    Byte     'F' final, 'C' intermediate, 'A' abort ('F' for UA-TCP)
//	MessageSize  UInt32   the whole chunk, header included

// Message types as the first four header bytes read as a little-endian
// UInt32 (type and chunk type together), so that one comparison classifies
// a header.
const (
	hdrLen = 8 // MessageType, ChunkType, MessageSize

	// ProtocolVersion is the UA-TCP protocol version we speak (OPC 10000-6
	// §7.1.2.3). It is the lowest there is, so no Hello can ask for a
	// version we do not support; the Acknowledge always carries it.
	ProtocolVersion = 0

	// MinBufferSize is the smallest ReceiveBufferSize and SendBufferSize a
	// Hello may carry: OPC 10000-6 §7.1.2.3 (v1.04) requires at least
	// 8192 bytes. (v1.05 lets constrained devices go down to 1024; we do
	// not serve them.)
	MinBufferSize = 8192

	// maxURLLength bounds the Hello's EndpointUrl and an Error's Reason
	// (§7.1.2.3, §7.1.2.5: "shall not be more than 4096 bytes").
	maxURLLength = 4096

	helloFixedLen = 5 * 4 // ProtocolVersion .. MaxChunkCount
	maxHelloLen   = hdrLen + helloFixedLen + 4 + maxURLLength
	ackLen        = hdrLen + 5*4 // an Acknowledge has a fixed size
)

// msgKind is the message type of a header, its three bytes as a number:
// compared without converting them to a string (a copy and a call per
// chunk, each time the type was looked at).
type msgKind uint32

// The message types of OPC 10000-6 §7.1.2.
const (
	kindHEL msgKind = 'H' | 'E'<<8 | 'L'<<16
	kindOPN msgKind = 'O' | 'P'<<8 | 'N'<<16
	kindMSG msgKind = 'M' | 'S'<<8 | 'G'<<16
	kindCLO msgKind = 'C' | 'L'<<8 | 'O'<<16
	kindERR msgKind = 'E' | 'R'<<8 | 'R'<<16
)

// msgType returns the message type of a header.
func msgType(h []byte) msgKind {
	_ = h[2]
	return msgKind(h[0]) | msgKind(h[1])<<8 | msgKind(h[2])<<16
}

// appendHeader appends a message header; the size is patched by putSize
// once the message is complete.
func appendHeader(b []byte, typ string, chunk byte) []byte {
	b = append(b, typ[0], typ[1], typ[2], chunk)
	return append(b, 0, 0, 0, 0)
}

// putSize writes the MessageSize of the message that starts at b[start:]
// and ends at len(b).
func putSize(b []byte, start int) {
	binary.LittleEndian.PutUint32(b[start+4:], uint32(len(b)-start))
}

// hello is the body of a Hello message (§7.1.2.3).
type hello struct {
	ProtocolVersion   uint32
	ReceiveBufferSize uint32 // the largest chunk the client can receive
	SendBufferSize    uint32 // the largest chunk the client will send
	MaxMessageSize    uint32 // the largest response the client accepts; 0: no limit
	MaxChunkCount     uint32 // the most chunks in a response; 0: no limit
	EndpointURL       string
}

// decode reads a Hello body (the message without its 8-byte header).
func (h *hello) decode(b []byte) error {
	var d ua.Decoder
	d.Limits.MaxStringLength = maxURLLength
	d.Reset(b)
	h.ProtocolVersion = d.ReadUint32()
	h.ReceiveBufferSize = d.ReadUint32()
	h.SendBufferSize = d.ReadUint32()
	h.MaxMessageSize = d.ReadUint32()
	h.MaxChunkCount = d.ReadUint32()
	h.EndpointURL = d.ReadString()
	if err := d.Err(); err != nil {
		if err == status.BadEncodingLimitsExceeded {
			return status.BadTcpEndpointURLInvalid
		}
		return status.BadTcpMessageTypeInvalid
	}
	if d.Remaining() != 0 {
		return status.BadTcpMessageTypeInvalid
	}
	return nil
}

// appendHello appends a whole Hello message (a client's; for tests and
// tools).
func appendHello(b []byte, h *hello) []byte {
	start := len(b)
	b = appendHeader(b, "HEL", 'F')
	b = ua.AppendUint32(b, h.ProtocolVersion)
	b = ua.AppendUint32(b, h.ReceiveBufferSize)
	b = ua.AppendUint32(b, h.SendBufferSize)
	b = ua.AppendUint32(b, h.MaxMessageSize)
	b = ua.AppendUint32(b, h.MaxChunkCount)
	b = ua.AppendString(b, h.EndpointURL)
	putSize(b, start)
	return b
}

// acknowledge is the body of an Acknowledge message (§7.1.2.4). Its
// fields are the server's: the largest chunk we receive and send, the
// largest request and the most chunks per request we accept.
type acknowledge struct {
	ProtocolVersion   uint32
	ReceiveBufferSize uint32
	SendBufferSize    uint32
	MaxMessageSize    uint32
	MaxChunkCount     uint32
}

func appendAcknowledge(b []byte, a *acknowledge) []byte {
	start := len(b)
	b = appendHeader(b, "ACK", 'F')
	b = ua.AppendUint32(b, a.ProtocolVersion)
	b = ua.AppendUint32(b, a.ReceiveBufferSize)
	b = ua.AppendUint32(b, a.SendBufferSize)
	b = ua.AppendUint32(b, a.MaxMessageSize)
	b = ua.AppendUint32(b, a.MaxChunkCount)
	putSize(b, start)
	return b
}

// AppendError appends a UA-TCP Error message (OPC 10000-6 §7.1.2.5): the
// status code and a reason, cut to 4096 bytes. A server that turns a
// connection away before Open (too many connections, say) sends one.
func AppendError(b []byte, code ua.StatusCode, reason string) []byte {
	if len(reason) > maxURLLength {
		reason = reason[:maxURLLength]
	}
	start := len(b)
	b = appendHeader(b, "ERR", 'F')
	b = ua.AppendUint32(b, uint32(code))
	b = ua.AppendString(b, reason)
	putSize(b, start)
	return b
}

// AppendReverseHello appends a ReverseHello message (OPC 10000-6
// §7.1.2.6): the server's ApplicationUri and the endpoint URL the client
// is to send back in its Hello. Each is at most 4096 bytes.
func AppendReverseHello(b []byte, serverURI, endpointURL string) []byte {
	start := len(b)
	b = appendHeader(b, "RHE", 'F')
	b = ua.AppendString(b, serverURI)
	b = ua.AppendString(b, endpointURL)
	putSize(b, start)
	return b
}

// decodeError reads an Error body (the message without its header).
func decodeError(b []byte) (*PeerError, error) {
	var d ua.Decoder
	d.Limits.MaxStringLength = maxURLLength
	d.Reset(b)
	e := &PeerError{Code: ua.StatusCode(d.ReadUint32()), Reason: d.ReadString()}
	if d.Err() != nil || d.Remaining() != 0 {
		return nil, status.BadTcpMessageTypeInvalid
	}
	return e, nil
}

// negotiate revises the client's Hello against our configuration
// (§7.1.2.4) and returns the Acknowledge. Our receive buffer is the
// smaller of ours and the client's send buffer, our send buffer the
// smaller of ours and the client's receive buffer: a Hello can only make
// our buffers smaller, so nothing it says is used to size an allocation.
// Buffers below MinBufferSize are rejected with Bad_TcpNotEnoughResources
// (we cannot fit a message into them); MaxMessageSize and MaxChunkCount of
// the Hello bound our responses (0: no limit) and need no revision.
func negotiate(h *hello, cfg *Config) (acknowledge, error) {
	if h.ReceiveBufferSize < MinBufferSize || h.SendBufferSize < MinBufferSize {
		return acknowledge{}, status.BadTcpNotEnoughResources
	}
	return acknowledge{
		ProtocolVersion:   ProtocolVersion,
		ReceiveBufferSize: min(cfg.ReceiveBufferSize, h.SendBufferSize),
		SendBufferSize:    min(cfg.SendBufferSize, h.ReceiveBufferSize),
		MaxMessageSize:    cfg.MaxMessageSize,
		MaxChunkCount:     cfg.MaxChunkCount,
	}, nil
}
