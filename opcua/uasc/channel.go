// Package uasc is the server side of OPC UA's connection and secure
// conversation layers (OPC 10000-6 §6.7 and §7.1): UA-TCP Hello,
// Acknowledge and Error; OpenSecureChannel issue and renew with token
// lifetimes; chunking, reassembly and abort chunks; sequence numbers and
// request ids; CloseSecureChannel. Security is a SecurityPolicy: the chunk
// layer calls it for headers, padding, signatures and encryption, so a new
// policy touches no framing code. SecurityPolicy None ships now.
//
// A Channel hands the server whole service messages (the type's encoding
// NodeId followed by the body) and takes back encoded responses.
package uasc

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/edged/edged/opcua/ua"
)

// Config sets the limits and policies of server-side channels. Zero fields
// take the defaults documented on each.
type Config struct {
	// ReceiveBufferSize and SendBufferSize are the largest chunks we accept
	// and send before negotiation with the client's Hello (default 65535,
	// minimum 8192).
	ReceiveBufferSize uint32
	SendBufferSize    uint32
	// MaxMessageSize (default 16 MiB) and MaxChunkCount (default 256)
	// bound a reassembled request; 0 in the client's Hello means no limit
	// on its side.
	MaxMessageSize uint32
	MaxChunkCount  uint32
	// HelloTimeout is how long a new connection may take to send its Hello
	// (default 10 s).
	HelloTimeout time.Duration
	// MinTokenLifetime and MaxTokenLifetime bound the revised lifetime of a
	// security token (defaults 10 s and 1 h).
	MinTokenLifetime time.Duration
	MaxTokenLifetime time.Duration
	// Policies offered (default: None only).
	Policies []SecurityPolicy
	// CheckEndpointURL, when set, vets the Hello's EndpointUrl; an error
	// closes the connection with Bad_TcpEndpointUrlInvalid.
	CheckEndpointURL func(url string) error
	// Limits of the decoder that reads OpenSecureChannel requests.
	Limits ua.Limits
	// NextChannelID returns a fresh, unique secure channel id (the server
	// owns the id space).
	NextChannelID func() uint32
}

// Request is a service request received on a channel.
type Request struct {
	// RequestID is the secure conversation request id, to be echoed by
	// WriteResponse.
	RequestID uint32
	// Message is the service message: the NodeId of the type's
	// DefaultBinary encoding followed by the body. It points into the
	// channel's receive buffer and is valid until the next ReadRequest.
	Message []byte
}

// ErrClosed is returned by ReadRequest after the client closed the channel
// with CloseSecureChannel or the connection ended.
var ErrClosed = errors.New("uasc: secure channel closed")

// Channel is one client's secure channel over one connection. ReadRequest
// is called by one goroutine; WriteResponse may be called from several.
type Channel struct {
	// filled in by the implementation
}

// Open runs the handshake on a new server-side connection: Hello →
// Acknowledge → OpenSecureChannel (Issue). Protocol violations are
// answered with an Error message carrying their status code before the
// connection is closed; the returned error is that ua.StatusCode.
func Open(ctx context.Context, nc net.Conn, cfg *Config) (*Channel, error) {
	return nil, errors.New("uasc: not implemented")
}

// ID returns the secure channel id.
func (c *Channel) ID() uint32 { return 0 }

// ReadRequest returns the next service request. OpenSecureChannel renewals,
// CloseSecureChannel and abort chunks are handled inside.
func (c *Channel) ReadRequest() (Request, error) { return Request{}, errors.New("uasc: not implemented") }

// WriteResponse sends msg (type NodeId + body) as the response to
// requestID, split into chunks as negotiated. A multi-chunk response leaves
// in one write; responses queued by several goroutines are coalesced into
// one write. msg is not retained after the call returns.
func (c *Channel) WriteResponse(requestID uint32, msg []byte) error {
	return errors.New("uasc: not implemented")
}

// Close sends an Error message with status and reason (unless status is
// Good) and closes the connection.
func (c *Channel) Close(status ua.StatusCode, reason string) error { return nil }

// SecurityPolicy is one OPC UA security policy as the chunk layer uses it.
type SecurityPolicy interface {
	// URI is the policy's URI, e.g.
	// "http://opcfoundation.org/UA/SecurityPolicy#None".
	URI() string
	// The implementation defines the rest: asymmetric and symmetric
	// security headers, padding, signing and verifying, encrypting and
	// decrypting, key derivation.
}
