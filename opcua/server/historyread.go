package server

import (
	"math"
	"sync"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/history"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// History is the history of a source's variables (see AddHistory): their
// raw values, and how to aggregate them.
type History interface {
	history.Reader
	// Aggregation returns variable h's Stepped property and its default
	// aggregate configuration.
	Aggregation(h uint32) history.Config
}

// histories holds the History of each source.
type histories struct {
	mu  sync.RWMutex
	all map[addrspace.SourceID]History
}

func (hs *histories) get(src addrspace.SourceID) History {
	hs.mu.RLock()
	defer hs.mu.RUnlock()
	return hs.all[src]
}

// AddHistory makes HistoryRead read the history of the Historizing
// variables of source src from h, and says so in
// Server/ServerCapabilities/HistoryServerCapabilities.
func (s *Server) AddHistory(src addrspace.SourceID, h History) error {
	s.hist.mu.Lock()
	if s.hist.all == nil {
		s.hist.all = map[addrspace.SourceID]History{}
	}
	s.hist.all[src] = h
	s.hist.mu.Unlock()
	return s.setHistoryCapabilities(true)
}

// histOp is a HistoryRead operation in progress, kept as a continuation
// point.
type histOp struct {
	node   ua.NodeID
	src    addrspace.SourceID
	h      uint32
	kind   histKind
	raw    history.Raw
	rc     history.RawCursor
	proc   history.Processed
	pc     history.ProcessedCursor
	times  []int64
	next   int // of times
	simple bool
	cfg    history.Config
	ev     *evOp // histEvents
}

type histKind uint8

const (
	histRaw histKind = iota
	histProcessed
	histAtTime
	histEvents
)

// historyRead answers HistoryRead (OPC 10000-4 §5.10.3) for variables:
// raw, processed and at-time reads (OPC 10000-11 §6.5); read-modified and
// event reads are Bad_HistoryOperationUnsupported per operation. A read
// with more values than its numValuesPerNode or MaxReturnDataValues gets a
// continuation point, which the session keeps (at most
// MaxHistoryContinuationPoints) until it is used, released or the session
// ends.
func (c *conn) historyRead(s *session, req *ua.HistoryReadRequest, resp *ua.HistoryReadResponse) error {
	if err := ua.CheckOperations(len(req.NodesToRead), c.srv.cfg.Limits.MaxNodesPerHistoryReadData); err != nil {
		return err
	}
	if d, ok := req.HistoryReadDetails.Body.(*ua.ReadEventDetails); ok {
		resp.Results = ua.Resize(resp.Results, len(req.NodesToRead))
		resp.DiagnosticInfos = nil
		for i := range req.NodesToRead {
			r := &resp.Results[i]
			if req.ReleaseContinuationPoints {
				r.StatusCode, r.ContinuationPoint, r.HistoryData = c.releaseHistory(s, req.NodesToRead[i].ContinuationPoint), nil, ua.ExtensionObject{}
				continue
			}
			c.historyEvents(s, d, &req.NodesToRead[i], r)
		}
		return nil
	}
	if !req.TimestampsToReturn.IsValid() || req.TimestampsToReturn == ua.TimestampsToReturnNeither {
		return status.BadTimestampsToReturnInvalid
	}
	var op histOp
	var unsupported bool
	switch d := req.HistoryReadDetails.Body.(type) {
	case *ua.ReadRawModifiedDetails:
		unsupported = d.IsReadModified // nothing is ever modified
		op.kind = histRaw
		op.raw = history.Raw{NumValues: d.NumValuesPerNode, Bounds: d.ReturnBounds}
		op.raw.Start, op.raw.StartSet = nanos(d.StartTime)
		op.raw.End, op.raw.EndSet = nanos(d.EndTime)
	case *ua.ReadProcessedDetails:
		if len(d.AggregateType) != len(req.NodesToRead) {
			return status.BadAggregateListMismatch
		}
		op.kind = histProcessed
		op.proc.Start, _ = nanos(d.StartTime)
		op.proc.End, _ = nanos(d.EndTime)
		if d.ProcessingInterval < 0 || math.IsNaN(d.ProcessingInterval) || d.ProcessingInterval > float64(math.MaxInt64/int64(time.Millisecond)) {
			op.proc.Interval = -1 // Check refuses it
		} else {
			op.proc.Interval = int64(d.ProcessingInterval * float64(time.Millisecond))
		}
	case *ua.ReadAtTimeDetails:
		op.kind = histAtTime
		op.simple = d.UseSimpleBounds
	default:
		return status.BadHistoryOperationInvalid
	}
	resp.Results = ua.Resize(resp.Results, len(req.NodesToRead))
	resp.DiagnosticInfos = nil
	for i := range req.NodesToRead {
		r := &resp.Results[i]
		r.StatusCode, r.ContinuationPoint = status.Good, nil
		data := c.historyData(r)
		nv := &req.NodesToRead[i]
		switch {
		case req.ReleaseContinuationPoints:
			r.StatusCode = c.releaseHistory(s, nv.ContinuationPoint)
		case unsupported:
			r.StatusCode = status.BadHistoryOperationUnsupported
		default:
			r.StatusCode, r.ContinuationPoint = c.historyOp(s, req, i, &op, data)
		}
	}
	return nil
}

// histData is a HistoryData body encoded as its values come: their
// count and the DataValues' bytes, in a buffer of the server's stash that
// the connection gives back once the response is encoded.
type histData struct {
	n   int
	enc []byte
}

func (h *histData) BinaryEncodingID() ua.NodeID { return (*ua.HistoryData)(nil).BinaryEncodingID() }

// Encode appends the HistoryData: the array of DataValues.
func (h *histData) Encode(b []byte) []byte {
	b = ua.AppendInt32(b, int32(h.n))
	return append(b, h.enc...)
}

// Decode is never called: the server only sends HistoryData.
func (h *histData) Decode(d *ua.Decoder) { d.Fail(status.BadDecodingError) }

// historyData returns r's HistoryData, empty, its buffer from the stash:
// a read of 10,000 values encodes about 200 KB.
func (c *conn) historyData(r *ua.HistoryReadResult) *histData {
	hd, ok := r.HistoryData.Body.(*histData)
	if !ok {
		hd = new(histData)
		r.HistoryData.Body = hd
	}
	hd.n = 0
	hd.enc = c.srv.stash.get(0)
	c.histHeld = append(c.histHeld, hd)
	return hd
}

// histSize is the bytes of the connection's HistoryData.
func (c *conn) histSize() int {
	n := 0
	for _, hd := range c.histHeld {
		n += len(hd.enc)
	}
	return n
}

// releaseHistData gives the buffers of the connection's HistoryData back
// to the stash, once the response is encoded.
func (c *conn) releaseHistData() {
	for i, hd := range c.histHeld {
		c.srv.stash.put(hd.enc)
		hd.enc, hd.n = nil, 0
		c.histHeld[i] = nil
	}
	c.histHeld = c.histHeld[:0]
}

// releaseHistory releases continuation point cp.
func (c *conn) releaseHistory(s *session, cp []byte) ua.StatusCode {
	if len(cp) == 0 {
		return status.Good
	}
	s.mu.Lock()
	_, ok := s.hcps.take(cp)
	s.mu.Unlock()
	if !ok {
		return status.BadContinuationPointInvalid
	}
	return status.Good
}

// historyOp runs operation i of req: a new one from tmpl, or the one its
// continuation point holds.
func (c *conn) historyOp(s *session, req *ua.HistoryReadRequest, i int, tmpl *histOp, data *histData) (ua.StatusCode, []byte) {
	nv := &req.NodesToRead[i]
	if nv.DataEncoding.Name != "" || nv.DataEncoding.NamespaceIndex != 0 {
		return status.BadDataEncodingInvalid, nil
	}
	var rng addrspace.NumericRange
	if nv.IndexRange != "" {
		var err error
		if rng, err = addrspace.ParseNumericRange(nv.IndexRange); err != nil {
			return status.BadIndexRangeInvalid, nil
		}
	}
	var op *histOp
	if len(nv.ContinuationPoint) > 0 {
		s.mu.Lock()
		held, ok := s.hcps.take(nv.ContinuationPoint)
		s.mu.Unlock()
		if !ok || held.node != nv.NodeID || held.kind != tmpl.kind {
			return status.BadContinuationPointInvalid, nil
		}
		op = held
	}
	src, h, st := c.srv.space.as.HistoryTarget(nv.NodeID, s.user())
	if st != status.Good {
		return st, nil
	}
	hist := c.srv.hist.get(src)
	if hist == nil {
		return status.BadHistoryOperationUnsupported, nil
	}
	if op == nil {
		op = new(histOp)
		*op = *tmpl
		op.node, op.src, op.h = nv.NodeID, src, h
		if err := c.startHistoryOp(op, req, i, hist); err != nil {
			return statusOf(err), nil
		}
	} else if op.src != src || op.h != h {
		return status.BadContinuationPointInvalid, nil // the node changed since
	}
	enc := histEncoder{data: data, tr: req.TimestampsToReturn, rng: &rng, ranged: nv.IndexRange != ""}
	more, err := c.runHistoryOp(op, hist, &enc)
	if err != nil {
		c.srv.cfg.Logger.Error("history read", "node", nv.NodeID, "err", err)
		data.n, data.enc = 0, data.enc[:0]
		return status.BadHistoryOperationInvalid, nil
	}
	var cp []byte
	if more {
		s.mu.Lock()
		b, ok := s.hcps.add(op)
		s.mu.Unlock()
		if !ok {
			data.n, data.enc = 0, data.enc[:0]
			return status.BadNoContinuationPoints, nil
		}
		cp = b
	}
	if data.n == 0 && !more {
		return status.GoodNoData, nil
	}
	return status.Good, cp
}

// startHistoryOp fills in op's parts that depend on the operation's node
// and checks them.
func (c *conn) startHistoryOp(op *histOp, req *ua.HistoryReadRequest, i int, hist History) error {
	switch op.kind {
	case histRaw:
		return op.raw.Check()
	case histProcessed:
		d := req.HistoryReadDetails.Body.(*ua.ReadProcessedDetails)
		op.proc.Aggregate = history.Aggregate(0)
		if agg := d.AggregateType[i]; agg.Namespace == 0 && agg.Type == ua.IDNumeric {
			op.proc.Aggregate = history.Aggregate(agg.Numeric)
		}
		cfg := hist.Aggregation(op.h)
		// A configuration left all zero is taken as the server's: a client
		// that sets nothing (open62541's, node-opcua's) means its defaults,
		// not 0 % for good and bad.
		if ac := d.AggregateConfiguration; !ac.UseServerCapabilitiesDefaults && ac != (ua.AggregateConfiguration{}) {
			if ac.PercentDataBad > 100 || ac.PercentDataGood > 100 || int(ac.PercentDataGood) < 100-int(ac.PercentDataBad) {
				return status.BadAggregateConfigurationRejected
			}
			cfg.TreatUncertainAsBad, cfg.UseSlopedExtrapolation = ac.TreatUncertainAsBad, ac.UseSlopedExtrapolation
			cfg.PercentDataBad, cfg.PercentDataGood = ac.PercentDataBad, ac.PercentDataGood
		}
		op.proc.Config = cfg
		return op.proc.Check()
	default:
		d := req.HistoryReadDetails.Body.(*ua.ReadAtTimeDetails)
		if len(d.ReqTimes) == 0 {
			return status.BadInvalidArgument
		}
		op.times = make([]int64, len(d.ReqTimes))
		for j, t := range d.ReqTimes {
			op.times[j], _ = nanos(t)
		}
		op.cfg = hist.Aggregation(op.h)
		return nil
	}
}

// runHistoryOp reads the next values of op into enc, at most
// MaxReturnDataValues (and numValuesPerNode for a raw read), and reports
// whether more are left.
func (c *conn) runHistoryOp(op *histOp, hist History, enc *histEncoder) (bool, error) {
	limit := c.srv.cfg.MaxReturnDataValues
	switch op.kind {
	case histRaw:
		if n := int(op.raw.NumValues); n > 0 && n < limit {
			limit = n
		}
		_, more, err := op.raw.Read(hist, op.h, &op.rc, limit, enc.add)
		return more, err
	case histProcessed:
		vals, more, err := op.proc.Read(hist, op.h, &op.pc, limit, c.histVals[:0])
		c.histVals = vals[:0]
		enc.addAll(vals)
		return more, err
	default:
		end := min(len(op.times), op.next+limit)
		vals, err := history.AtTime(hist, op.h, op.times[op.next:end], op.simple, op.cfg, c.histVals[:0])
		c.histVals = vals[:0]
		enc.addAll(vals)
		op.next = end
		return end < len(op.times), err
	}
}

// histEncoder encodes the values of an operation into its HistoryData, as
// DataValues with the timestamps asked for (the source timestamp stands
// for the server's: edged stamps values as it reads them) and index range
// rng applied when ranged.
type histEncoder struct {
	data   *histData
	tr     ua.TimestampsToReturn
	rng    *addrspace.NumericRange
	ranged bool
}

func (e *histEncoder) add(v *history.Value) {
	t := int64(0)
	if v.T != history.MinTime {
		t = ua.TicksFromUnixNano(v.T)
		if v.T == history.MaxTime {
			t = math.MaxInt64
		}
	}
	var src, srv int64
	if e.tr != ua.TimestampsToReturnServer {
		src = t
	}
	if e.tr == ua.TimestampsToReturnServer || e.tr == ua.TimestampsToReturnBoth {
		srv = t
	}
	val, st := &v.V, v.Status
	if e.ranged && !val.IsNull() {
		x, rst := e.rng.Apply(*val)
		if rst != status.Good {
			x, st = ua.Variant{}, rst
		}
		val = &x
	}
	e.data.enc = ua.AppendDataValue(e.data.enc, val, st, src, srv)
	e.data.n++
}

func (e *histEncoder) addAll(vals []history.Value) {
	for i := range vals {
		e.add(&vals[i])
	}
}

// nanos returns a DateTime of a request as Unix ns, false for
// DateTime.MinValue (not specified); times beyond what Unix ns hold are
// clamped.
func nanos(t time.Time) (int64, bool) {
	switch {
	case t.IsZero() || ua.DateTimeTicks(t) == 0:
		return history.MinTime, false
	case t.Year() >= 2262:
		return history.MaxTime, true
	case t.Year() < 1678:
		return history.MinTime + 1, true
	}
	return t.UnixNano(), true
}

// historyUpdate answers HistoryUpdate (§5.10.5): edged does not change
// its history; every operation is Bad_HistoryOperationUnsupported.
func (c *conn) historyUpdate(s *session, req *ua.HistoryUpdateRequest, resp *ua.HistoryUpdateResponse) error {
	if err := ua.CheckOperations(len(req.HistoryUpdateDetails), c.srv.cfg.Limits.MaxNodesPerHistoryUpdateData); err != nil {
		return err
	}
	resp.Results = ua.Resize(resp.Results, len(req.HistoryUpdateDetails))
	resp.DiagnosticInfos = nil
	for i := range resp.Results {
		resp.Results[i] = ua.HistoryUpdateResult{StatusCode: status.BadHistoryOperationUnsupported}
	}
	return nil
}

// setHistoryCapabilities says in HistoryServerCapabilities whether the
// server reads history, and which aggregates.
func (s *Server) setHistoryCapabilities(on bool) error {
	for _, v := range historyValues(on, s.cfg.MaxReturnDataValues) {
		if err := s.as.SetValue(ua.NewNumericNodeID(0, v.node), ua.MustVariant(v.v)); err != nil {
			return err
		}
	}
	if !on {
		return nil
	}
	folder := ua.NewNumericNodeID(0, id.HistoryServerCapabilities_AggregateFunctions)
	have := map[ua.NodeID]bool{}
	for _, r := range s.as.References(folder) {
		have[r.Target.NodeID] = true
	}
	for _, a := range history.Aggregates {
		t := ua.NewNumericNodeID(0, uint32(a))
		if have[t] || s.as.Node(t) == nil {
			continue
		}
		if err := s.as.AddReference(folder, ua.NewNumericNodeID(0, id.Organizes), ua.ExpandedNodeID{NodeID: t}); err != nil {
			return err
		}
	}
	return nil
}
