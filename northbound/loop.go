package northbound

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/edged/edged/mqtt"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/sparkplug"
)

// command is a message the broker delivered, for the node's goroutine.
type command struct {
	epoch   uint64 // the connection it came on
	topic   string
	payload []byte
}

// dialed is the outcome of a connection attempt.
type dialed struct {
	epoch uint64
	conn  *mqtt.Conn
	err   error
}

// markEvery is the least time between two PINGREQs that mark what was
// published (see mqtt.Conn.Mark): each costs the broker's answer and a
// wake-up to read it; what the broker did not confirm when a connection
// breaks is forwarded again, so this bounds the values a crashed broker
// may make come twice.
var markEvery = 20 * time.Millisecond

// Reconnection back-off: after every broker of the list failed once, the
// next round waits, doubling from backoffMin to backoffMax, ±20 %.
// A connection that ends within stableAfter counts as a failed attempt.
const (
	backoffMin  = 500 * time.Millisecond
	backoffMax  = 10 * time.Second
	stableAfter = 5 * time.Second
)

// loop is the state of the node's goroutine.
type loop struct {
	n   *Node
	st  *settings
	lay *layout

	epoch       uint64 // of the connection attempt in progress or made
	conn        *mqtt.Conn
	connDone    <-chan struct{}
	dialing     bool
	dialCancel  context.CancelFunc
	dials       chan dialed
	early       []command // commands of the connection being made
	broker      int       // index of the broker tried or used
	failed      int       // brokers that failed in this round
	backoff     time.Duration
	connectedAt time.Time
	retry       *time.Timer
	retryC      <-chan time.Time
	bdSeq       uint64
	hostOnline  bool
	hostTime    uint64
	born        bool
	seq         uint64
	lastReplay  int64
	budget      float64

	buf      []byte
	props    [4]sparkplug.Property
	queued   []*device   // devices with changes not yet published
	changed  []*device   // devices whose communication changed in this image
	spans    []*span     // what waits to be forwarded
	birthImg int64       // the time of the image the births carried
	birthCyc uint64      // its cycle: images before it are older than the births
	birthDue bool        // births asked for before the engine's first cycle
	scan     scanFigures // the scan's figures, as watchScan last read them
	lastMark int64       // when a PINGREQ last went out after data
	unmarked bool        // data went out after it
	writes   chan struct{}
}

func (n *Node) run() {
	defer close(n.done)
	l := &loop{n: n, dials: make(chan dialed, 1), writes: make(chan struct{}, 8), backoff: backoffMin}
	l.retry = time.NewTimer(time.Hour)
	l.retry.Stop()
	// The scan's figures come from a goroutine of their own: the engine's
	// Diagnostics asks every driver for its statistics, which waits for a
	// request in progress (45 ms in the benchmark), and the node's
	// goroutine must not wait with it.
	diag := make(chan scanFigures, 1)
	go n.watchScan(diag)
	for {
		select {
		case <-n.quit:
			l.shutdown()
			return
		case im := <-n.images:
			l.image(im)
			im.Release()
		case u := <-n.reconf:
			l.reconfigure(u)
		case c := <-n.cmds:
			l.command(c)
		case d := <-l.dials:
			l.connected(d)
		case <-l.connDone:
			l.lost(l.conn.Err())
		case <-l.retryC:
			l.retryC = nil
			l.dial()
		case f := <-diag:
			l.scan = f
			l.nodeData()
		}
	}
}

// reconfigure takes a new configuration: the same session rebirths with
// the new tags; another session reconnects.
func (l *loop) reconfigure(u *update) {
	old, oldLay := l.st, l.lay
	l.st, l.lay = u.st, u.lay
	if oldLay != nil {
		l.lay.carry(oldLay)
		spans := l.spans[:0]
		for _, sp := range l.spans {
			if m := l.lay.byName[sp.m.dev.name+"."+sp.m.name]; m != nil && m.stored && m.series == sp.m.series {
				sp.m = m
				spans = append(spans, sp)
			}
		}
		l.spans = spans
	}
	l.queued = l.queued[:0]
	switch {
	case old == nil:
		l.dial()
	case !sameSession(old, u.st):
		l.drop("the configuration changed")
		l.broker, l.failed, l.backoff = 0, 0, backoffMin
		l.dial()
	case l.born:
		l.birth()
	}
}

// dial starts connecting to the current broker.
func (l *loop) dial() {
	if l.dialing || l.conn != nil {
		return
	}
	l.dialing = true
	l.epoch++
	l.bdSeq = (l.bdSeq + 1) % 256
	if l.epoch == 1 {
		l.bdSeq = 0
	}
	l.early = l.early[:0]
	st, epoch, cmds := l.st, l.epoch, l.n.cmds
	url := st.brokers[l.broker%len(st.brokers)]
	l.n.setState("connecting", url, l.bdSeq)
	death := sparkplug.AppendHeader(nil, uint64(time.Now().UnixMilli()), 0, false)
	death = sparkplug.AppendMetric(death, &sparkplug.Metric{Name: "bdSeq", Value: sparkplug.Value{Type: sparkplug.UInt64, Bits: l.bdSeq}})
	opt := mqtt.Options{
		ClientID: st.clientID, Username: st.username, Password: st.password, KeepAlive: st.keepAlive, TLS: st.tls,
		Will: &mqtt.Message{Topic: string(sparkplug.AppendTopic(nil, st.group, sparkplug.NDEATH, st.node, "")), Payload: death, QoS: 1},
		Handler: func(topic string, payload []byte) {
			c := command{epoch: epoch, topic: topic, payload: append([]byte(nil), payload...)}
			select {
			case cmds <- c:
			default: // a flood of commands: the excess is dropped
			}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(st.keepAlive, 5*time.Second))
	l.dialCancel = cancel
	filters := []string{
		string(sparkplug.AppendTopic(nil, st.group, sparkplug.NCMD, st.node, "")),
		string(sparkplug.AppendTopic(nil, st.group, sparkplug.DCMD, st.node, "+")),
	}
	if st.primaryHost != "" {
		filters = append(filters, sparkplug.StateTopic(st.primaryHost))
	}
	go func() {
		defer cancel()
		c, err := mqtt.Dial(ctx, url, opt)
		if err == nil {
			if err = c.Subscribe(ctx, 1, filters...); err != nil {
				c.Close()
				c = nil
			}
		}
		l.dials <- dialed{epoch: epoch, conn: c, err: err}
	}()
}

// connected takes the outcome of a connection attempt.
func (l *loop) connected(d dialed) {
	l.dialing = false
	if d.err != nil {
		l.n.errorf("%s: %v", l.st.brokers[l.broker%len(l.st.brokers)], d.err)
		l.next()
		return
	}
	l.conn, l.connDone = d.conn, d.conn.Done()
	l.connectedAt = time.Now()
	l.hostOnline, l.hostTime = false, 0
	l.n.log.Info("sparkplug: connected", "broker", l.st.brokers[l.broker%len(l.st.brokers)], "bdSeq", l.bdSeq)
	early := l.early
	l.early = nil
	for _, c := range early {
		l.command(c)
	}
	if l.st.primaryHost == "" {
		l.birth()
	} else if !l.born {
		l.n.setState("waiting for the primary host", l.st.brokers[l.broker%len(l.st.brokers)], l.bdSeq)
	}
}

// next moves to the next broker: at once, or after the back-off when all
// failed in this round.
func (l *loop) next() {
	l.broker = (l.broker + 1) % len(l.st.brokers)
	l.failed++
	if l.failed < len(l.st.brokers) {
		l.dial()
		return
	}
	l.failed = 0
	wait := time.Duration(float64(l.backoff) * (0.8 + 0.4*rand.Float64()))
	l.backoff = min(2*l.backoff, backoffMax)
	l.retry.Reset(wait)
	l.retryC = l.retry.C
}

// lost handles the end of the connection.
func (l *loop) lost(err error) {
	l.birthDue = false
	if err != nil {
		l.n.errorf("%s: %v", l.st.brokers[l.broker%len(l.st.brokers)], err)
	}
	l.outage()
	l.conn, l.connDone = nil, nil
	l.n.cnt.reconnects.Add(1)
	if time.Since(l.connectedAt) < stableAfter {
		l.next() // a broker that takes the connection and drops it: the next, or the back-off
		return
	}
	l.failed, l.backoff = 0, backoffMin
	l.dial() // the same broker first: a restarted broker is back at once; a dead one fails fast
}

// drop ends the session on purpose: NDEATH, DISCONNECT.
func (l *loop) drop(why string) {
	l.birthDue = false
	if l.dialing {
		l.dialCancel()
		d := <-l.dials
		if d.conn != nil {
			d.conn.Close()
		}
		l.dialing = false
	}
	if l.conn == nil {
		return
	}
	if l.born {
		l.publishDeath()
	}
	l.outage()
	l.conn.Close()
	l.conn, l.connDone = nil, nil
	l.n.log.Info("sparkplug: disconnected", "why", why)
}

// deathWait bounds the wait for the broker to confirm what went before an
// NDEATH.
const deathWait = 2 * time.Second

// publishDeath publishes the NDEATH of the session (as the will would
// be) and waits, up to deathWait, until the broker confirmed it and what
// went before: what it confirmed is not forwarded again.
func (l *loop) publishDeath() {
	b := sparkplug.AppendHeader(l.buf[:0], uint64(time.Now().UnixMilli()), 0, false)
	b = sparkplug.AppendMetric(b, &sparkplug.Metric{Name: "bdSeq", Timestamp: uint64(time.Now().UnixMilli()),
		Value: sparkplug.Value{Type: sparkplug.UInt64, Bits: l.bdSeq}})
	l.buf = b
	l.conn.Publish(string(sparkplug.AppendTopic(nil, l.st.group, sparkplug.NDEATH, l.st.node, "")), b, false)
	mark := l.conn.Mark()
	l.conn.Flush()
	ctx, cancel := context.WithTimeout(context.Background(), deathWait)
	defer cancel()
	l.conn.WaitConfirmed(ctx, mark)
}

func (l *loop) shutdown() {
	l.drop("edged stops")
	l.retry.Stop()
	l.n.setState("stopped", "", l.bdSeq)
	for {
		select {
		case im := <-l.n.images:
			im.Release()
		default:
			return
		}
	}
}

// command handles a message from the broker.
func (l *loop) command(c command) {
	if c.epoch != l.epoch {
		return // of a connection that is gone
	}
	if l.conn == nil {
		if len(l.early) < cap(l.n.cmds) {
			l.early = append(l.early, c)
		}
		return
	}
	if l.st.primaryHost != "" && c.topic == sparkplug.StateTopic(l.st.primaryHost) {
		l.state(c.payload)
		return
	}
	t, ok := sparkplug.ParseTopic(c.topic)
	if !ok || t.Group != l.st.group || t.Node != l.st.node {
		return
	}
	switch t.Type {
	case sparkplug.NCMD:
		l.nodeCommand(c.payload)
	case sparkplug.DCMD:
		l.deviceCommand(t.Device, c.payload)
	}
}

// state takes the primary host's STATE.
func (l *loop) state(payload []byte) {
	s, err := sparkplug.ParseState(payload)
	if err != nil {
		l.n.errorf("primary host %s: %v", l.st.primaryHost, err)
		return
	}
	if s.Timestamp != 0 && s.Timestamp < l.hostTime {
		return // older than one seen
	}
	l.hostTime = s.Timestamp
	l.hostOnline = s.Online
	switch {
	case s.Online && !l.born:
		l.birth()
	case !s.Online && l.born:
		// Sparkplug 3.0: NDEATH, disconnect, and connect again (to wait for
		// the host there).
		l.drop("the primary host is offline")
		l.dial()
	}
}

// publish publishes payload b on topic, counting it, and returns the
// mark that will confirm it (0 when the connection failed).
func (l *loop) publish(topic string, b []byte, metrics int) uint64 {
	mark, err := l.conn.Publish(topic, b, false)
	if err != nil {
		return 0
	}
	l.n.cnt.messages.Add(1)
	l.n.cnt.metrics.Add(uint64(metrics))
	l.unmarked = true
	return mark
}

// nextSeq returns the next message's seq (0..255).
func (l *loop) nextSeq() uint64 {
	s := l.seq
	l.seq = (l.seq + 1) % 256
	return s
}

// flush writes what was published, with a PINGREQ after it to mark it
// when markEvery passed since the last.
func (l *loop) flush() {
	if now := time.Now().UnixNano(); l.unmarked && now-l.lastMark >= int64(markEvery) {
		l.conn.Mark()
		l.lastMark, l.unmarked = now, false
	}
	l.conn.Flush()
}

// image publishes what image im changed.
func (l *loop) image(im *plc.Image) {
	if l.birthDue && l.conn != nil {
		l.birth()
		return
	}
	if !l.born || l.conn == nil {
		return
	}
	if im.Cycle() < l.birthCyc {
		// Queued before the births, which took a newer image: their
		// values are older than the births' (and forwarded, if stored).
		// Sent after them they would go back in time and then repeat
		// the births' values.
		return
	}
	lay := l.lay
	now := im.Time().UnixNano()
	var last *device // of the handle before
	for _, h := range im.Changed() {
		if int(h) >= len(lay.byHandle) {
			continue
		}
		m := lay.byHandle[h]
		if m == nil {
			continue
		}
		s := im.Sample(h)
		if s.Time == 0 {
			s.Time = now
		}
		d := m.dev
		if d != last {
			if last != nil {
				l.dataNow(last, now)
			}
			last = d
		}
		if nc := s.Status == status.BadNoCommunication; nc != m.nocomm {
			m.nocomm = nc
			if nc {
				d.nocomm++
			} else {
				d.nocomm--
			}
			if !d.changed {
				d.changed = true
				l.changed = append(l.changed, d)
			}
		}
		if !d.online {
			continue
		}
		if m.pending { // waiting for min_interval: the latest value goes out
			m.next = s
			continue
		}
		if !m.changedEnough(&s) {
			continue
		}
		m.next, m.pending = s, true
		if len(d.dirty) == 0 {
			l.queued = append(l.queued, d)
		}
		d.dirty = append(d.dirty, m)
	}
	for _, d := range l.changed {
		d.changed = false
		switch {
		case d.online && d.nocomm == len(d.metrics):
			l.deviceDeath(d)
		case !d.online && d.nocomm < len(d.metrics):
			l.deviceBirth(d, im)
		}
	}
	l.changed = l.changed[:0]
	q := l.queued[:0]
	for _, d := range l.queued {
		if len(d.dirty) == 0 {
			continue
		}
		if l.st.minInterval > 0 && now-d.lastSent < int64(l.st.minInterval) {
			q = append(q, d)
			continue
		}
		l.deviceData(d, now)
	}
	l.queued = q
	l.replayStep(now)
	l.flush()
}

// dataNow publishes d's changes at once, before the rest of the image is
// looked at, when nothing makes them wait: no minimum interval, no birth
// or death to go first. The engine lists a device's changes together (it
// merges a device's poll at once), so a burst of large DDATA goes out one
// by one as it is made (each written when large, mqtt.Conn.Publish), not
// after the whole image; changes listed apart would make a DDATA each,
// every change still once.
func (l *loop) dataNow(d *device, now int64) {
	if l.st.minInterval == 0 && d.online && !d.changed && len(d.dirty) > 0 {
		l.deviceData(d, now)
	}
}

// deviceData publishes d's pending changes as DDATA, with aliases.
func (l *loop) deviceData(d *device, now int64) {
	b := sparkplug.AppendHeader(l.buf[:0], uint64(now/1e6), l.nextSeq(), true)
	for _, m := range d.dirty {
		s := &m.next
		mt := sparkplug.Metric{Alias: m.alias, HasAlias: true, Timestamp: uint64(s.Time / 1e6), OmitType: true, Value: valueOf(m, s)}
		if !s.Status.IsGood() || s.Status != m.sentSt {
			l.props[0] = sparkplug.Property{Key: "Quality", Value: sparkplug.Value{Type: sparkplug.Int32, Bits: quality(s.Status)}}
			mt.Properties = l.props[:1]
		}
		b = sparkplug.AppendMetric(b, &mt)
	}
	l.buf = b
	mark, confirmed := l.publish(d.topicData, b, len(d.dirty)), l.conn.Confirmed()
	for _, m := range d.dirty {
		sent(m, &m.next, mark, confirmed)
		m.pending = false
	}
	d.dirty = d.dirty[:0]
	d.lastSent = now
}

// sent records sample s of m as published, confirmed by mark.
func sent(m *metric, s *plc.Sample, mark, confirmed uint64) {
	if m.birthT == 0 {
		m.birthT = s.Time // the first value after a birth that had none
	}
	m.have = true
	m.sentSt = s.Status
	if !s.Status.IsBad() {
		m.sentBits = s.Value.Bits()
		if m.typ == plc.String {
			m.sentText = s.Value.Text()
		}
	}
	if m.stored {
		m.wm.advance(s.Time, mark, confirmed)
	}
}

// valueOf is sample s of m as a metric value: null when Bad.
func valueOf(m *metric, s *plc.Sample) sparkplug.Value {
	v := sparkplug.Value{Type: m.dt}
	switch {
	case s.Status.IsBad():
		v.Null = true
	case m.typ == plc.String:
		v.Text = s.Value.Text()
	default:
		v.Bits = s.Value.Bits()
	}
	return v
}
