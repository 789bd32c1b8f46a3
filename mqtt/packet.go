package mqtt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Packet types (MQTT 3.1.1 §2.2.1), in the high nibble of the first byte.
const (
	tConnect    = 1
	tConnack    = 2
	tPublish    = 3
	tPuback     = 4
	tSubscribe  = 8
	tSuback     = 9
	tPingreq    = 12
	tPingresp   = 13
	tDisconnect = 14
)

// ErrProtocol is the error of a packet from the broker that MQTT 3.1.1
// does not allow there.
var ErrProtocol = errors.New("mqtt: protocol error")

// maxRemaining is the largest remaining length MQTT encodes (§2.2.3).
const maxRemaining = 268435455

// appendRemaining appends n as a remaining length.
func appendRemaining(b []byte, n int) []byte {
	for {
		d := byte(n % 128)
		n /= 128
		if n > 0 {
			d |= 0x80
		}
		b = append(b, d)
		if n == 0 {
			return b
		}
	}
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, s []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// appendPublish appends a PUBLISH packet (QoS 0, or 1 with packet id id).
func appendPublish(b []byte, topic string, payload []byte, qos byte, retain bool, id uint16) []byte {
	h := byte(tPublish<<4) | qos<<1
	if retain {
		h |= 1
	}
	n := 2 + len(topic) + len(payload)
	if qos > 0 {
		n += 2
	}
	b = appendRemaining(append(b, h), n)
	b = appendString(b, topic)
	if qos > 0 {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	return append(b, payload...)
}

// connectPacket is the CONNECT packet of o (MQTT 3.1.1 §3.1).
func connectPacket(o *Options) ([]byte, error) {
	var body []byte
	body = appendString(body, "MQTT")
	body = append(body, 4) // protocol level 3.1.1
	flags := byte(0x02)    // clean session
	if o.Will != nil {
		flags |= 0x04 | o.Will.QoS<<3
		if o.Will.Retain {
			flags |= 0x20
		}
	}
	if o.Username != "" {
		flags |= 0x80
	}
	if o.Password != nil {
		flags |= 0x40
	}
	body = append(body, flags)
	ka := int((o.KeepAlive + 999_999_999) / 1_000_000_000)
	if ka > 65535 {
		return nil, fmt.Errorf("mqtt: keep-alive %v beyond 65535 s", o.KeepAlive)
	}
	body = binary.BigEndian.AppendUint16(body, uint16(ka))
	body = appendString(body, o.ClientID)
	if w := o.Will; w != nil {
		body = appendString(body, w.Topic)
		body = appendBytes(body, w.Payload)
	}
	if o.Username != "" {
		body = appendString(body, o.Username)
	}
	if o.Password != nil {
		body = appendBytes(body, o.Password)
	}
	for _, s := range []string{o.ClientID, o.Username} {
		if len(s) > 65535 {
			return nil, errors.New("mqtt: a client id or user name longer than 65,535 bytes")
		}
	}
	if len(o.Password) > 65535 || o.Will != nil && (len(o.Will.Topic) > 65535 || len(o.Will.Payload) > 65535) {
		return nil, errors.New("mqtt: a password or will longer than 65,535 bytes")
	}
	return append(appendRemaining([]byte{tConnect << 4}, len(body)), body...), nil
}

// subscribePacket is a SUBSCRIBE packet of filters at qos.
func subscribePacket(id uint16, qos byte, filters []string) []byte {
	var body []byte
	body = binary.BigEndian.AppendUint16(body, id)
	for _, f := range filters {
		body = append(appendString(body, f), qos)
	}
	return append(appendRemaining([]byte{tSubscribe<<4 | 2}, len(body)), body...)
}

// readPacket reads one packet into buf (grown up to max bytes) and
// returns its first byte and body.
func readPacket(r *bufio.Reader, buf *[]byte, max int) (byte, []byte, error) {
	hdr, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, mul := 0, 1
	for i := 0; ; i++ {
		d, err := r.ReadByte()
		if err != nil {
			return 0, nil, unexpected(err)
		}
		n += int(d&0x7f) * mul
		if d&0x80 == 0 {
			break
		}
		if i == 3 {
			return 0, nil, fmt.Errorf("%w: a remaining length of more than 4 bytes", ErrProtocol)
		}
		mul *= 128
	}
	if n > max {
		return 0, nil, fmt.Errorf("%w: a packet of %d bytes, beyond the %d allowed", ErrProtocol, n, max)
	}
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, unexpected(err)
	}
	return hdr, b, nil
}

// unexpected is err, io.ErrUnexpectedEOF for an EOF inside a packet.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parsePublish parses the body of a PUBLISH with header byte h.
func parsePublish(h byte, b []byte) (topic string, payload []byte, qos byte, id uint16, err error) {
	qos = h >> 1 & 3
	if qos == 3 || len(b) < 2 {
		return "", nil, 0, 0, ErrProtocol
	}
	tl := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+tl {
		return "", nil, 0, 0, ErrProtocol
	}
	topic, b = string(b[2:2+tl]), b[2+tl:]
	if qos > 0 {
		if len(b) < 2 {
			return "", nil, 0, 0, ErrProtocol
		}
		id, b = binary.BigEndian.Uint16(b), b[2:]
	}
	return topic, b, qos, id, nil
}
