package main

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
)

// The Read load on one connection of internal/testutil/uaclient's minimal client:
// Read requests pre-encoded once and pipelined, responses parsed just
// enough to match and count them.

const (
	offReqID  = uaclient.OffRequestID
	msgHdrLen = uaclient.MsgHeaderLen
)

// Encodings of the response type ids in their four-byte form, as servers
// send them.
var (
	readResponseID = uaclient.FourByteID(634) // ReadResponse_Encoding_DefaultBinary
	faultID        = uaclient.FourByteID(397) // ServiceFault_Encoding_DefaultBinary
)

// reader is the state of a pipelined run on one connection.
type reader struct {
	c        *uaclient.Client
	inflight int
	template []byte // the MSG chunk of the Read request; seq and id patched per send
	wbuf     []byte // requests queued for the next write
	nodes    int    // results expected per response
	verify   bool   // decode every response fully (tests)

	// Per slot: the request id in flight and when it was sent.
	slotID   []uint32
	slotGen  []uint32
	slotSent []int64 // monotonic ns since base
	free     []int   // slots with no request in flight
	batch    []int   // slots appended to wbuf, stamped when written
	base     time.Time

	batchN  int // refill when this many slots are free
	minResp int // bytes of the smallest response chunk seen
	lowat   int // SO_RCVLOWAT set on the connection; 0: not set

	multi    bool // inside a multi-chunk response
	multiOK  bool
	multiReq uint32

	resp ua.ReadResponse // for verify and the slow path
	dec  ua.Decoder

	hist histogram // latencies of responses received while recording

	// Read by the coordinator while the run goes on.
	done   atomic.Uint64 // responses received
	errs   atomic.Uint64 // responses that are not a good Read of nodes good results
	sent   atomic.Uint64
	lastEr atomic.Pointer[string]
}

// Phases of a run, set by the coordinator: warm up (count, do not record
// latencies), measure (record), stop (send no more, drain what is in
// flight, return).
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// slotBits: a request id is its slot in the low bits and the slot's
// generation above, so a response finds its slot without a map even if
// responses came out of order.
const slotBits = 12

func newReader(c *uaclient.Client, req *ua.ReadRequest, inflight int, verify bool) (*reader, error) {
	if inflight < 1 || inflight > 1<<slotBits {
		return nil, fmt.Errorf("uabench: %d requests in flight, want 1..%d", inflight, 1<<slotBits)
	}
	req.RequestHeader = c.Header()
	tpl, err := c.Template(req)
	if err != nil {
		return nil, fmt.Errorf("uabench: Read request: %w", err)
	}
	r := &reader{
		c: c, inflight: inflight, template: tpl, nodes: len(req.NodesToRead), verify: verify,
		slotID: make([]uint32, inflight), slotGen: make([]uint32, inflight), slotSent: make([]int64, inflight),
		free: make([]int, 0, inflight), batch: make([]int, 0, inflight),
		batchN: max(1, inflight/4),
	}
	for i := inflight - 1; i >= 0; i-- {
		r.free = append(r.free, i)
	}
	r.wbuf = make([]byte, 0, inflight*len(tpl))
	return r, nil
}

// enqueue appends a request in slot s to the write buffer.
func (r *reader) enqueue(s int) {
	c := r.c
	r.slotGen[s]++
	id := r.slotGen[s]<<slotBits | uint32(s)
	r.slotID[s] = id
	r.wbuf = c.AppendStamped(r.wbuf, r.template, id)
	r.batch = append(r.batch, s)
}

// flush writes the queued requests in one write, stamping their send time.
func (r *reader) flush() error {
	if len(r.batch) == 0 {
		return nil
	}
	now := int64(time.Since(r.base))
	for _, s := range r.batch {
		r.slotSent[s] = now
	}
	r.sent.Add(uint64(len(r.batch)))
	r.batch = r.batch[:0]
	_, err := r.c.Conn().Write(r.wbuf)
	r.wbuf = r.wbuf[:0]
	return err
}

// run keeps inflight requests outstanding, batching the requests that
// replace answered ones into one write per read, until phase says stop,
// maxRequests have been sent (0: no limit), or the connection fails; it
// then waits for the requests in flight and returns.
func (r *reader) run(phase *atomic.Int32, maxRequests uint64) error {
	r.base = time.Now()
	var sent uint64
	more := func() bool { return phase.Load() != phaseStop && (maxRequests == 0 || sent < maxRequests) }
	for len(r.free) > 0 && more() {
		s := r.free[len(r.free)-1]
		r.free = r.free[:len(r.free)-1]
		r.enqueue(s)
		sent++
	}
	if err := r.flush(); err != nil {
		return err
	}
	for len(r.free) < r.inflight {
		if err := r.setLowat(); err != nil {
			return err
		}
		if err := r.c.Fill(); err != nil {
			return err
		}
		now := int64(time.Since(r.base))
		record := phase.Load() == phaseMeasure
		var done, errs uint64
		for {
			chunk, ok, err := r.c.NextChunk()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			id, complete, good := r.response(chunk)
			if !complete {
				continue
			}
			s := int(id & (1<<slotBits - 1))
			if s >= r.inflight || r.slotID[s] != id {
				return fmt.Errorf("uabench: response to request %#x, which is not in flight", id)
			}
			r.slotID[s] = 0
			r.free = append(r.free, s)
			done++
			if !good {
				errs++
			}
			if record {
				r.hist.add(uint64(max(now-r.slotSent[s], 0)))
			}
			if r.minResp == 0 || len(chunk) < r.minResp {
				r.minResp = len(chunk)
			}
		}
		r.done.Add(done)
		if errs > 0 {
			r.errs.Add(errs)
		}
		// Refill once a batch of slots is free: many requests per write.
		if len(r.free) >= r.batchN {
			for len(r.free) > 0 && more() {
				s := r.free[len(r.free)-1]
				r.free = r.free[:len(r.free)-1]
				r.enqueue(s)
				sent++
			}
		}
		if err := r.flush(); err != nil {
			return err
		}
	}
	if r.lowat > 1 {
		r.lowat = 1
		return setRcvLowat(r.c.Conn(), 1) // for what follows, e.g. close
	}
	return nil
}

// setLowat sets the socket's SO_RCVLOWAT so that the reader wakes up once
// a batch of responses is there rather than for each one: the server
// writes every response on its own, and a load process that reads each
// one as it comes spends as much CPU as the server. The mark never
// exceeds what the requests in flight will bring, so no read waits for
// bytes that cannot come.
func (r *reader) setLowat() error {
	if r.batchN <= 1 || r.minResp == 0 {
		return nil
	}
	k := min(r.batchN, r.inflight-len(r.free))
	want := 1
	if k > 1 {
		want = min((k-1)*r.minResp+1, maxLowat)
	}
	if want == r.lowat {
		return nil
	}
	r.lowat = want
	return setRcvLowat(r.c.Conn(), want)
}

// maxLowat bounds SO_RCVLOWAT well below the smallest receive buffer.
const maxLowat = 32 << 10

// response parses a chunk just enough: its request id, and whether it
// completes a good Read response (type ReadResponse, good ServiceResult,
// nodes results, the first one good).
func (r *reader) response(chunk []byte) (id uint32, complete, good bool) {
	if len(chunk) < msgHdrLen || string(chunk[:3]) != "MSG" {
		r.fail("unexpected chunk " + strconv.Quote(string(chunk[:4])))
		return 0, false, false
	}
	id = binary.LittleEndian.Uint32(chunk[offReqID:])
	switch chunk[3] {
	case 'F':
		if r.multi {
			r.multi = false
			return id, id == r.multiReq, r.multiOK
		}
		return id, true, r.check(chunk[msgHdrLen:], true)
	case 'C':
		if !r.multi {
			r.multi, r.multiReq, r.multiOK = true, id, r.check(chunk[msgHdrLen:], false)
		}
		return id, false, false
	default: // 'A': the server aborted the response
		r.multi = false
		r.fail("response aborted")
		return id, true, false
	}
}

// check looks at the start of a Read response message. whole says the
// message is complete (so it can be fully decoded when it needs to be).
func (r *reader) check(msg []byte, whole bool) bool {
	if r.verify && whole {
		return r.decode(msg)
	}
	// Fast path: the layout our server and most others send: type id,
	// ResponseHeader with an empty DiagnosticInfo, a null StringTable and
	// a null AdditionalHeader, then the Results.
	//
	//	0 type id  4 Timestamp  12 RequestHandle  16 ServiceResult
	//	20 DiagnosticInfo mask  21 StringTable length  25 AdditionalHeader (3 bytes)
	//	28 Results length  32 first DataValue's mask
	if len(msg) >= 33 && binary.LittleEndian.Uint32(msg) == readResponseID &&
		msg[20] == 0 && int32(binary.LittleEndian.Uint32(msg[21:])) <= 0 &&
		msg[25] == 0 && msg[26] == 0 && msg[27] == 0 {
		if sc := ua.StatusCode(binary.LittleEndian.Uint32(msg[16:])); sc.IsBad() {
			r.fail("ServiceResult " + sc.String())
			return false
		}
		if n := int32(binary.LittleEndian.Uint32(msg[28:])); n != int32(r.nodes) {
			r.fail(fmt.Sprintf("%d results, want %d", n, r.nodes))
			return false
		}
		if msg[32]&0x02 == 0 { // no StatusCode: Good
			return true
		}
	}
	if len(msg) >= 4 && binary.LittleEndian.Uint32(msg) == faultID && len(msg) >= 20 {
		r.fail("ServiceFault " + ua.StatusCode(binary.LittleEndian.Uint32(msg[16:])).String())
		return false
	}
	if !whole {
		r.fail("unexpected start of a multi-chunk response")
		return false
	}
	return r.decode(msg)
}

// decode decodes a whole Read response and checks every result.
func (r *reader) decode(msg []byte) bool {
	r.dec.Reset(msg)
	if err := ua.DecodeMessageInto(&r.dec, &r.resp); err != nil {
		if f, ferr := ua.DecodeMessage(ua.NewDecoder(msg)); ferr == nil {
			if sf, ok := f.(*ua.ServiceFault); ok {
				err = sf.ResponseHeader.ServiceResult
			}
		}
		r.fail("response: " + err.Error())
		return false
	}
	if sc := r.resp.ResponseHeader.ServiceResult; sc.IsBad() {
		r.fail("ServiceResult " + sc.String())
		return false
	}
	if len(r.resp.Results) != r.nodes {
		r.fail(fmt.Sprintf("%d results, want %d", len(r.resp.Results), r.nodes))
		return false
	}
	for i := range r.resp.Results {
		if sc := r.resp.Results[i].Status; sc.IsBad() || (r.verify && r.resp.Results[i].Value.IsNull()) {
			r.fail(fmt.Sprintf("result %d: status %v, value %v", i, sc, r.resp.Results[i].Value))
			return false
		}
	}
	return true
}

// fail remembers the last error seen in a response.
func (r *reader) fail(s string) { r.lastEr.Store(&s) }
