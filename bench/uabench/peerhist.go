package main

import (
	"fmt"
	"time"

	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
)

// histResult is what the history phase measured: raw HistoryReads of the
// counter's last histSpan, one after another over one connection.
type histResult struct {
	window   time.Duration
	calls    int
	values   int
	cpu      time.Duration
	p50, p99 time.Duration
}

// cpuPerValue is the server's CPU per value returned in ns, less idle (a
// fraction of a core) over the window.
func (h histResult) cpuPerValue(idle float64) float64 {
	net := h.cpu.Seconds() - idle*h.window.Seconds()
	return net * 1e9 / float64(max(h.values, 1))
}

// histSpan is the time each history read covers; histAge how long the
// server must have run first (its history then spans it).
const (
	histSpan = 40 * time.Second
	histAge  = 45 * time.Second
)

// runHistory reads the raw history of counter, the values of the last
// histSpan up to a second ago, again and again for the load's duration
// after its warm-up, and measures the server's CPU per value returned.
func runHistory(addr string, counter ua.NodeID, started time.Time, f peerFlags, srv *proc) (histResult, error) {
	var res histResult
	if wait := time.Until(started.Add(histAge)); wait > 0 {
		time.Sleep(wait)
	}
	c, err := uaclient.DialSecure(addr, "uabench", f.load.security, 10*time.Second)
	if err != nil {
		return res, err
	}
	defer c.Conn().Close()
	read := func() (int, error) {
		now := time.Now()
		req := &ua.HistoryReadRequest{
			RequestHeader: c.Header(),
			HistoryReadDetails: ua.ExtensionObject{Body: &ua.ReadRawModifiedDetails{
				StartTime: now.Add(-histSpan), EndTime: now.Add(-time.Second)}},
			TimestampsToReturn: ua.TimestampsToReturnSource,
			NodesToRead:        []ua.HistoryReadValueID{{NodeID: counter}},
		}
		var resp ua.HistoryReadResponse
		if err := c.Call(req, &resp); err != nil {
			return 0, err
		}
		if len(resp.Results) != 1 {
			return 0, fmt.Errorf("HistoryRead: %d results", len(resp.Results))
		}
		r := &resp.Results[0]
		if r.StatusCode != 0 || len(r.ContinuationPoint) > 0 {
			return 0, fmt.Errorf("HistoryRead: %v, continuation point %x", r.StatusCode, r.ContinuationPoint)
		}
		hd, ok := r.HistoryData.Body.(*ua.HistoryData)
		if !ok {
			return 0, fmt.Errorf("HistoryRead: HistoryData %T", r.HistoryData.Body)
		}
		return len(hd.DataValues), nil
	}
	warm := time.Now().Add(f.load.warmup)
	for time.Now().Before(warm) {
		if _, err := read(); err != nil {
			return res, err
		}
	}
	var h histogram
	s0, err := srv.sample()
	if err != nil {
		return res, err
	}
	end := time.Now().Add(f.load.duration)
	for time.Now().Before(end) {
		t0 := time.Now()
		n, err := read()
		if err != nil {
			return res, err
		}
		h.add(uint64(time.Since(t0)))
		res.calls++
		res.values += n
	}
	s1, err := srv.sample()
	if err != nil {
		return res, err
	}
	res.window, res.cpu = s1.at.Sub(s0.at), s1.cpu-s0.cpu
	res.p50, res.p99 = h.quantile(0.5), h.quantile(0.99)
	return res, nil
}
