package uasc

import (
	"bytes"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// seqProgram turns fuzz input into what a client sends after the
// handshake: a sequence of chunks, each chosen and filled from the input
// (MSG intermediate, final and abort chunks of interleaved or nested
// requests, OpenSecureChannel renewals, CloseSecureChannel, a second
// Hello, chunks with another channel or token id, a sequence number out
// of order, raw bytes). It also models what a correct server hands out:
// the complete requests, in order, up to the first chunk that breaks the
// protocol (after it, the channel may end at any point).
type seqProgram struct {
	tc       testClient
	in       []byte
	out      []byte
	want     []Request // complete requests before the first violation
	broken   bool      // a chunk that breaks the protocol was sent
	open     bool      // a request is being reassembled
	openID   uint32
	openBody []byte
	chunks   uint32 // chunks of the request being reassembled
	// The server's tokens: cur, the newest, and prev, the one the client
	// used last, until the client uses cur (0: none); used, the token the
	// client used last; nextTok, the next one's id.
	cur, prev, used, nextTok uint32
}

func (p *seqProgram) byte() byte {
	if len(p.in) == 0 {
		return 0
	}
	b := p.in[0]
	p.in = p.in[1:]
	return b
}

// body returns a body of a fuzzed length (0..1020 bytes) from the input.
func (p *seqProgram) body() []byte {
	n := int(p.byte()) * 4
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func (p *seqProgram) run() {
	for n := 0; len(p.in) > 0 && n < 64; n++ {
		switch op := p.byte() % 10; op {
		case 0, 1, 2, 3: // a MSG chunk of request id 1..4
			p.msg(p.byte())
		case 4: // renewal
			p.out = append(p.out, p.tc.opnChunk(ua.SecurityTokenRequestTypeRenew, 100+uint32(n), 60000)...)
			p.prev, p.cur = p.used, p.nextTok
			p.nextTok++
			if p.byte()%2 == 0 {
				p.tc.tokID = p.cur // the client goes on with the new token
			}
		case 5: // CloseSecureChannel: the channel ends
			p.out = append(p.out, p.tc.symChunk("CLO", 'F', 200, ua.AppendMessage(nil, &ua.CloseSecureChannelRequest{}))...)
			p.broken = true
		case 6: // a sequence number out of order
			p.out = append(p.out, p.tc.symChunkSeq("MSG", 'F', p.tc.seq+2+uint32(p.byte()), 9, nil)...)
			p.broken = true
		case 7: // another channel's or token's id
			tc := p.tc
			if p.byte()%2 == 0 {
				tc.chanID++
			} else {
				tc.tokID += 7
			}
			p.out = append(p.out, tc.symChunk("MSG", 'F', 9, nil)...)
			p.tc.seq = tc.seq
			p.broken = true
		case 8: // a second Hello
			h := defaultHello()
			p.out = append(p.out, appendHello(nil, &h)...)
			p.broken = true
		case 9: // raw bytes
			p.out = append(p.out, p.body()...)
			p.broken = true
		}
	}
}

// msg appends a MSG chunk: its type and request id from ctl.
func (p *seqProgram) msg(ctl byte) {
	reqID := uint32(ctl%4) + 1
	typ := []byte{'C', 'F', 'A'}[int(ctl>>2)%3]
	body := p.body()
	p.out = append(p.out, p.tc.symChunk("MSG", typ, reqID, body)...)
	switch tok := p.tc.tokID; {
	case tok == p.cur:
		p.prev, p.used = 0, tok // the old token is done with
	case tok != p.prev || p.prev == 0:
		p.broken = true // a token the server dropped
	}
	if p.broken {
		return
	}
	switch {
	case p.open && reqID != p.openID:
		p.broken = true // a chunk of another request inside one
	case typ == 'A':
		p.open, p.openBody = false, nil
	case typ == 'C':
		if !p.open {
			p.open, p.openID, p.openBody, p.chunks = true, reqID, nil, 0
		}
		p.openBody = append(p.openBody, body...)
		p.chunks++
		if len(p.openBody) > 1<<16 || p.chunks > 8 {
			p.broken = true // beyond fuzzConfig's MaxMessageSize or MaxChunkCount
		}
	case typ == 'F':
		all := append(p.openBody, body...)
		if p.open && (len(all) > 1<<16 || p.chunks+1 > 8) {
			p.broken = true
			return
		}
		p.want = append(p.want, Request{RequestID: reqID, Message: all})
		p.open, p.openBody = false, nil
	}
}

// FuzzChannelSequences drives a channel with sequences of well-formed and
// broken chunks (see seqProgram) and checks what it hands out: the
// complete requests in order with their bodies reassembled, nothing
// before the first violation lost, no panic, a sticky error at the end,
// and the reassembly budget given back.
func FuzzChannelSequences(f *testing.F) {
	// Seeds: one request; a request in three chunks; an abort; a renewal
	// used at once and one used later; a close; interleaved requests.
	f.Add([]byte{0, 1, 10})
	f.Add([]byte{0, 0, 5, 0, 0, 6, 0, 1, 7})
	f.Add([]byte{0, 0, 5, 0, 8, 0, 0, 1, 1})
	f.Add([]byte{4, 0, 0, 1, 3, 4, 1, 0, 1, 3, 5})
	f.Add([]byte{0, 0, 9, 0, 1, 9, 2, 0, 9})
	f.Add([]byte{0, 0, 200, 0, 0, 200, 0, 1, 200})
	f.Add([]byte{6, 0, 7, 1, 8, 9, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &seqProgram{in: data, cur: 1, used: 1, nextTok: 2}
		hs := handshakeBytes(&p.tc)
		p.tc.chanID, p.tc.tokID = 5, 1
		p.run()
		cfg := fuzzConfig()
		cfg.Budget = NewBudget(1<<20, 0)
		ch, err := Open(t.Context(), &memConn{bytes.NewReader(append(hs, p.out...))}, cfg)
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		var got []Request
		for {
			req, err := ch.ReadRequest()
			if err != nil {
				if _, err2 := ch.ReadRequest(); err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				if code, ok := err.(*Error); ok && !code.Code.IsBad() {
					t.Fatalf("channel ended with %v", err)
				}
				break
			}
			got = append(got, Request{RequestID: req.RequestID, Message: bytes.Clone(req.Message)})
			if err := ch.WriteResponse(req.RequestID, req.Message); err != nil {
				t.Fatalf("WriteResponse: %v", err)
			}
		}
		ch.Close(status.Good, "")
		if u := cfg.Budget.Used(); u != 0 {
			t.Fatalf("%d bytes of the budget still taken after the channel ended", u)
		}
		// Before the first violation, exactly the model's requests; after
		// it, the channel may have ended anywhere.
		if !p.broken && len(got) != len(p.want) {
			t.Fatalf("%d requests handed out, want %d", len(got), len(p.want))
		}
		for i := range min(len(got), len(p.want)) {
			if got[i].RequestID != p.want[i].RequestID || !bytes.Equal(got[i].Message, p.want[i].Message) {
				t.Fatalf("request %d: id %d, %d bytes; want id %d, %d bytes", i, got[i].RequestID, len(got[i].Message), p.want[i].RequestID, len(p.want[i].Message))
			}
		}
		if len(got) < len(p.want) && !p.broken {
			t.Fatalf("requests lost: %d of %d", len(got), len(p.want))
		}
	})
}
