package northbound

import (
	"math"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/sparkplug"
)

// The node's own metrics, by alias (1-based: alias i+1 is nodeMetrics[i]).
var nodeMetrics = []struct {
	name string
	dt   sparkplug.DataType
}{
	{"bdSeq", sparkplug.UInt64},
	{"Node Control/Rebirth", sparkplug.Boolean},
	{"Node Info/Version", sparkplug.String},
	{"Scan/Cycles", sparkplug.UInt64},
	{"Scan/Overruns", sparkplug.UInt64},
	{"Scan/Cycle Time P99", sparkplug.Double}, // ms
	{"Store and Forward/Backlog", sparkplug.UInt64},
	{"Store and Forward/Backlog Age", sparkplug.Double}, // s
}

const aliasRebirth = 2

// scanFigures are the scan's figures among the node's metrics.
type scanFigures struct {
	cycles, overruns uint64
	p99              time.Duration
}

// nodeDataEvery is how often the node's metrics are published (NDATA).
const nodeDataEvery = 5 * time.Second

// watchScan reads the engine's diagnostics at once and every
// nodeDataEvery, and hands them to the node's goroutine, until the node
// stops.
func (n *Node) watchScan(out chan scanFigures) {
	t := time.NewTicker(nodeDataEvery)
	defer t.Stop()
	var d plc.Diagnostics
	for {
		n.opt.Engine.Diagnostics(&d)
		f := scanFigures{cycles: d.Cycles, overruns: d.Overruns, p99: d.CycleTime.P99}
		select {
		case <-out: // not taken: the newer replaces it
		default:
		}
		out <- f
		select {
		case <-n.quit:
			return
		case <-t.C:
		}
	}
}

// nodeValue is the value of node metric i.
func (l *loop) nodeValue(i int) sparkplug.Value {
	d := &l.scan
	v := sparkplug.Value{Type: nodeMetrics[i].dt}
	switch i {
	case 0:
		v.Bits = l.bdSeq
	case 2:
		v.Text = l.n.opt.Version
	case 3:
		v.Bits = d.cycles
	case 4:
		v.Bits = d.overruns
	case 5:
		v.Bits = math.Float64bits(float64(d.p99) / 1e6)
	case 6:
		v.Bits = l.n.cnt.backlog.Load()
	case 7:
		v.Bits = math.Float64bits(l.n.Stats().BacklogAge.Seconds())
	}
	return v
}

// birth publishes NBIRTH and the DBIRTH of every device that answers,
// from the current image, and starts forwarding what an outage kept.
func (l *loop) birth() {
	im := l.n.opt.Engine.Acquire()
	defer im.Release()
	if im.Cycle() == 0 {
		// The engine has not run a cycle yet: no value has a time. The
		// births wait for its first image.
		l.birthDue = true
		return
	}
	l.birthDue = false
	l.seq = 0
	now := time.Now().UnixMilli()
	b := sparkplug.AppendHeader(l.buf[:0], uint64(now), l.nextSeq(), true)
	for i := range nodeMetrics {
		b = sparkplug.AppendMetric(b, &sparkplug.Metric{Name: nodeMetrics[i].name, Alias: uint64(i + 1), HasAlias: true,
			Timestamp: uint64(now), Value: l.nodeValue(i)})
	}
	l.buf = b
	l.publish(string(sparkplug.AppendTopic(nil, l.st.group, sparkplug.NBIRTH, l.st.node, "")), b, len(nodeMetrics))
	l.born = true
	l.birthImg, l.birthCyc = im.Time().UnixNano(), im.Cycle()
	for _, d := range l.lay.devices {
		d.nocomm, d.online, d.dirty = 0, false, d.dirty[:0]
		for _, m := range d.metrics {
			m.pending = false
			m.nocomm = im.Status(m.h) == status.BadNoCommunication
			if m.nocomm {
				d.nocomm++
			}
		}
		if d.nocomm < len(d.metrics) {
			l.deviceBirth(d, im)
		}
	}
	l.queued = l.queued[:0]
	l.n.setState("online", l.st.brokers[l.broker%len(l.st.brokers)], l.bdSeq)
	l.startReplay()
	l.flush()
}

// deviceBirth publishes d's DBIRTH from image im: every metric with its
// name, alias, type, value and properties.
func (l *loop) deviceBirth(d *device, im *plc.Image) {
	imT := im.Time().UnixNano()
	b := sparkplug.AppendHeader(l.buf[:0], uint64(imT/1e6), l.nextSeq(), true)
	for _, m := range d.metrics {
		s := im.Sample(m.h)
		if s.Time == 0 {
			s.Time = imT
		}
		props := l.props[:0]
		props = append(props, sparkplug.Property{Key: "Quality", Value: sparkplug.Value{Type: sparkplug.Int32, Bits: quality(s.Status)}})
		if m.unit != "" {
			props = append(props, sparkplug.Property{Key: "engUnit", Value: sparkplug.Value{Type: sparkplug.String, Text: m.unit}})
		}
		if m.hasEU {
			props = append(props,
				sparkplug.Property{Key: "engLow", Value: sparkplug.Value{Type: sparkplug.Double, Bits: math.Float64bits(m.euLow)}},
				sparkplug.Property{Key: "engHigh", Value: sparkplug.Value{Type: sparkplug.Double, Bits: math.Float64bits(m.euHigh)}})
		}
		b = sparkplug.AppendMetric(b, &sparkplug.Metric{Name: m.name, Alias: m.alias, HasAlias: true,
			Timestamp: uint64(s.Time / 1e6), Value: valueOf(m, &s), Properties: props})
	}
	l.buf = b
	mark, confirmed := l.publish(d.topicDBir, b, len(d.metrics)), l.conn.Confirmed()
	for _, m := range d.metrics {
		s := im.Sample(m.h)
		if s.Time == 0 {
			s.Time = imT
		}
		m.birthT = 0
		if s.Status == status.BadWaitingForInitialData {
			m.have = false
			continue
		}
		sent(m, &s, mark, confirmed)
	}
	d.online = true
	d.dirty = d.dirty[:0]
	for _, m := range d.metrics {
		m.pending = false
	}
}

// deviceDeath publishes d's DDEATH: every tag of it lost communication.
func (l *loop) deviceDeath(d *device) {
	b := sparkplug.AppendHeader(l.buf[:0], uint64(time.Now().UnixMilli()), l.nextSeq(), true)
	l.buf = b
	l.publish(d.topicDDth, b, 0)
	d.online = false
	for _, m := range d.dirty {
		m.pending = false
	}
	d.dirty = d.dirty[:0]
}

// nodeData publishes the node's own metrics (NDATA), every few seconds.
func (l *loop) nodeData() {
	if !l.born || l.conn == nil {
		return
	}
	now := time.Now().UnixMilli()
	b := sparkplug.AppendHeader(l.buf[:0], uint64(now), l.nextSeq(), true)
	for i := 3; i < len(nodeMetrics); i++ {
		b = sparkplug.AppendMetric(b, &sparkplug.Metric{Alias: uint64(i + 1), HasAlias: true, Timestamp: uint64(now), OmitType: true, Value: l.nodeValue(i)})
	}
	l.buf = b
	l.publish(string(sparkplug.AppendTopic(nil, l.st.group, sparkplug.NDATA, l.st.node, "")), b, len(nodeMetrics)-3)
	l.flush()
}

// nodeCommand handles an NCMD: Node Control/Rebirth.
func (l *loop) nodeCommand(payload []byte) {
	rebirth := false
	_, err := sparkplug.Decode(payload, func(m *sparkplug.Metric) error {
		if m.Name == nodeMetrics[aliasRebirth-1].name || m.Name == "" && m.HasAlias && m.Alias == aliasRebirth {
			if v, err := m.As(sparkplug.Boolean); err == nil && !v.Null && v.Bits == 1 {
				rebirth = true
			}
		}
		return nil
	})
	if err != nil {
		l.n.errorf("an NCMD: %v", err)
		return
	}
	if rebirth && l.born {
		l.n.log.Info("sparkplug: rebirth asked for")
		l.birth()
	}
}
