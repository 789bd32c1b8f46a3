package devices

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/drivers/modbus"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
)

// modbusSettings are a Modbus device's link-independent settings.
type modbusSettings struct {
	unit    uint8                    // the unit of tags that name none
	units   map[uint8]*modbus.Client // the device's unit ids
	order   config.Order             // the device's default order
	timeout time.Duration            // one request's timeout, 0 where the link bounds each (TCP)
	plan    modbus.PlanOptions       // the planner's limits
	inline  bool                     // the link is in memory (the simulator's): Inline
}

// mtag is one bound tag of a Modbus device.
type mtag struct {
	cfg    *cfgPoint // its name and point, in modbusDevice.cfg
	handle plc.Handle
	client int32 // index in modbusDevice.clients
	block  int32 // index in modbusDevice.blocks
	typ    plc.Type
}

// blockSplit is the state of a block read point by point in this poll; the
// other states are Good (read) and the status of the block's failure.
// Drivers never report it: it is a Good code with info bits set.
const blockSplit plc.Status = 1

// modbusDevice is the plc.Device of a Modbus TCP connection or of the units
// of one device on an RTU bus; see the package documentation.
type modbusDevice struct {
	inline  bool
	name    string
	cfg     []cfgPoint    // the device's configured tags (Bind looks them up)
	cfgErr  map[int]error // why cfg[i] has no point, for the few that have none
	def     modbus.Order
	timeout time.Duration // of a request, put into its context by req; 0: the link's own (TCP)
	popt    modbus.PlanOptions
	unit    uint8
	clients []*modbus.Client // by unit id, ascending
	byUnit  map[uint8]int32

	// Set by Bind.
	tags    []mtag
	local   handleMap // handle → index in tags
	blocks  []modbus.Block
	bclient []int32 // block → client
	split   []bool  // block read point by point (an exception on the merged block)

	// Scratch of Poll and Write (one goroutine at a time).
	gen   uint32
	want  []uint32     // block → gen of the poll that needs it
	state []plc.Status // block → Good, blockSplit or the failure's status
	data  [][]byte     // block → response data
	down  []plc.Status // client → the communication failure of this poll, 0 if none
	one   []byte       // a point read alone
	rctx  *reqCtx      // the last request context made (req)

	// Statistics, read by Stats from any goroutine.
	mu      sync.Mutex
	lastErr string
	lastAt  time.Time
	rtt     atomic.Int64
}

var (
	_ plc.Device      = (*modbusDevice)(nil)
	_ plc.Reconnecter = (*modbusDevice)(nil)
)

// Reconnect closes the device's connection (TCP) or serial port (RTU), so
// that the next poll opens it again; its clients all share that link.
func (m *modbusDevice) Reconnect(ctx context.Context) error {
	if len(m.clients) == 0 {
		return nil
	}
	if err := m.clients[0].Reconnect(ctx); err != nil {
		return fmt.Errorf("devices[%s]: reconnect: %w: %w", m.name, statusOf(err), err)
	}
	return nil
}

func newModbus(d *config.Device, s modbusSettings) (*modbusDevice, error) {
	def, err := modbus.ParseOrder(string(s.order))
	if err != nil {
		return nil, fmt.Errorf("devices[%s]: order: %w", d.Name, err)
	}
	m := &modbusDevice{
		name: d.Name, def: def, timeout: s.timeout,
		popt: s.plan, unit: s.unit, byUnit: map[uint8]int32{}, inline: s.inline,
	}
	// The points, not the configuration: the driver outlives it.
	m.cfg = make([]cfgPoint, len(d.Tags))
	for i := range d.Tags {
		t := &d.Tags[i]
		m.cfg[i] = cfgPoint{name: t.Name}
		var err error
		if m.cfg[i].p, err = m.point(t); err != nil {
			if m.cfgErr == nil {
				m.cfgErr = map[int]error{}
			}
			m.cfgErr[i] = err
		}
	}
	units := make([]uint8, 0, len(s.units))
	for u := range s.units {
		units = append(units, u)
	}
	slices.Sort(units)
	for _, u := range units {
		m.byUnit[u] = int32(len(m.clients))
		m.clients = append(m.clients, s.units[u])
	}
	m.down = make([]plc.Status, len(m.clients))
	return m, nil
}

// cfgPoint is what Bind needs of a configured tag: its name and point
// (or, in modbusDevice.cfgErr, why it has none). The point is checked
// against the bound tag's address, which is not kept (16 bytes a tag).
type cfgPoint struct {
	name string
	p    modbus.Point
}

// point returns the modbus.Point of a configured tag.
func (m *modbusDevice) point(t *config.Tag) (modbus.Point, error) {
	area, off, err := config.ParseAddress(t.Address)
	if err != nil {
		return modbus.Point{}, fmt.Errorf("address: %w", err)
	}
	p := modbus.Point{Unit: m.unit, Area: modbus.Area(area), Address: uint16(off)}
	if t.Unit != nil {
		p.Unit = uint8(*t.Unit)
	}
	switch t.Type {
	case config.Bool:
		p.Type = modbus.Bool
		if !area.IsBit() {
			if t.Bit == nil {
				return p, errors.New("bit: missing for a bool in a register")
			}
			p.Type, p.Bit = modbus.Bit, uint8(*t.Bit)
		}
	case config.String:
		p.Type, p.Len = modbus.String, uint16(t.Length)
	default:
		if p.Type, err = modbus.ParseType(string(t.Type)); err != nil {
			return p, fmt.Errorf("type: %w", err)
		}
	}
	if p.Order, err = modbus.ParseOrder(string(t.Order)); err != nil {
		return p, fmt.Errorf("order: %w", err)
	}
	if s := t.Scaling; s != nil {
		p.Scale = &modbus.Scaling{Raw: modbus.Range{Low: s.RawMin, High: s.RawMax}, EU: modbus.Range{Low: s.EUMin, High: s.EUMax}}
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("address: %w", err)
	}
	return p, nil
}

// Bind implements plc.Device: it makes the points of the tags and plans
// their block reads (again, on every call).
func (m *modbusDevice) Bind(bound []plc.BoundTag) error {
	tags := make([]mtag, 0, len(bound))
	points := make([]modbus.Point, 0, len(bound))
	cfg := make(map[string]int, len(m.cfg))
	for i := range m.cfg {
		cfg[m.cfg[i].name] = i
	}
	var errs []error
	for _, b := range bound {
		tp := "devices[" + m.name + "].tags[" + b.Tag.Name + "]"
		i, ok := cfg[b.Tag.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: not in the device's configuration", tp))
			continue
		}
		t := &m.cfg[i]
		p := t.p
		if err := m.cfgErr[i]; err != nil {
			errs = append(errs, fmt.Errorf("%s.%w", tp, err))
			continue
		}
		if area, off, err := modbus.ParsePointAddress(b.Tag.Address); err != nil || area != p.Area || off != p.Address {
			errs = append(errs, fmt.Errorf("%s.address: %q bound, %v %d configured", tp, b.Tag.Address, p.Area, p.Address))
			continue
		}
		ci, ok := m.byUnit[p.Unit]
		if !ok {
			errs = append(errs, fmt.Errorf("%s.unit: %d is not a unit of the device", tp, p.Unit))
			continue
		}
		tags = append(tags, mtag{cfg: t, handle: b.Handle, typ: b.Tag.Type, client: ci})
		points = append(points, p)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	blocks, err := modbus.Plan(points, m.popt)
	if err != nil {
		return fmt.Errorf("devices[%s]: plan: %w", m.name, err)
	}
	local := newHandleMap(bound)
	for i := range tags {
		local.set(tags[i].handle, int32(i))
	}
	bclient := make([]int32, len(blocks))
	for b := range blocks {
		bclient[b] = m.byUnit[blocks[b].Unit]
		for _, i := range blocks[b].Points {
			tags[i].block = int32(b)
		}
	}
	m.tags, m.local, m.blocks, m.bclient = tags, local, blocks, bclient
	m.split = make([]bool, len(blocks))
	m.want = make([]uint32, len(blocks))
	m.state = make([]plc.Status, len(blocks))
	m.data = make([][]byte, len(blocks))
	for b := range blocks {
		n := int(blocks[b].Count) * 2
		if blocks[b].Area.IsBit() {
			n = (int(blocks[b].Count) + 7) / 8
		}
		m.data[b] = make([]byte, 0, n)
	}
	m.one = make([]byte, 0, 2*modbus.MaxRegisters)
	return nil
}

// index returns the index in m.tags of handle h, -1 if none.
func (m *modbusDevice) index(h plc.Handle) int32 {
	return m.local.get(h)
}

// reqCtx is the context of an RTU device's requests (its bus is shared
// by devices with timeouts of their own): the poll's (or write's) context
// with the earlier deadline of the request's timeout. It is immutable,
// because the driver may derive contexts from it (a dial's) whose
// goroutines outlive the request, so req shares one between the requests
// of a short while (reqReuse) rather than make one per request.
type reqCtx struct {
	context.Context
	deadline time.Time
}

func (c *reqCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// AfterFunc passes on the AfterFunc of the poll's context, the scan
// engine's, which arms a function without a goroutine (see
// drivers/modbus): embedding promotes only the methods of
// context.Context.
func (c *reqCtx) AfterFunc(f func()) (stop func() bool) {
	if a, ok := c.Context.(interface{ AfterFunc(func()) func() bool }); ok {
		return a.AfterFunc(f)
	}
	return context.AfterFunc(c.Context, f)
}

// reqReuse is the fraction of the device's timeout for which req reuses
// a request context: a request's deadline comes after at least 7/8 of
// the timeout, never after all of it, and a device polled every cycle
// makes a context every 125 ms of a 1 s timeout, not one per request.
const reqReuse = 8

// req returns the context of a request under ctx: ctx itself when the
// link bounds each request by the device's timeout (a TCP link, one per
// device) or when ctx's deadline comes before that timeout, else a reqCtx
// whose deadline is at most the timeout away.
func (m *modbusDevice) req(ctx context.Context) context.Context {
	if m.timeout == 0 {
		return ctx
	}
	now := time.Now()
	dl := now.Add(m.timeout)
	if pd, ok := ctx.Deadline(); ok && !pd.After(dl) {
		return ctx
	}
	// (Interfaces of a type that is not comparable would panic on ==.)
	if c := m.rctx; c != nil && reflect.TypeOf(ctx).Comparable() && c.Context == ctx && c.deadline.Sub(now) >= m.timeout-m.timeout/reqReuse {
		return c
	}
	m.rctx = &reqCtx{Context: ctx, deadline: dl}
	return m.rctx
}

// Inline implements plc.Inline: true on a link to the simulator in
// memory (slave.Server.Conn), whose requests are answered in the write
// that sends them, so that a poll never waits.
func (m *modbusDevice) Inline() bool { return m.inline }

// Poll implements plc.Device; see the package documentation.
func (m *modbusDevice) Poll(ctx context.Context, due []plc.Handle, out []plc.Sample) error {
	m.gen++
	if m.gen == 0 { // wrapped: forget every mark
		clear(m.want)
		m.gen = 1
	}
	for _, h := range due {
		if i := m.index(h); i >= 0 {
			m.want[m.tags[i].block] = m.gen
		}
	}
	clear(m.down)
	answered := false
	var lastErr error
	for b := range m.blocks {
		if m.want[b] != m.gen {
			continue
		}
		ci := m.bclient[b]
		if st := m.down[ci]; st != 0 {
			m.state[b] = st
			continue
		}
		if m.split[b] {
			m.state[b] = blockSplit
			continue
		}
		data, err := m.clients[ci].ReadBlock(m.req(ctx), &m.blocks[b], m.data[b])
		if err == nil {
			m.data[b], m.state[b] = data, status.Good
			m.okRequest(ci)
			answered = true
			continue
		}
		if cerr := ctx.Err(); cerr != nil {
			m.failed(err)
			return fmt.Errorf("devices[%s]: %w: %w", m.name, plc.StatusOf(cerr), err)
		}
		st := m.failed(err)
		switch {
		case plc.IsCommunication(st):
			m.down[ci], m.state[b] = st, st
			lastErr = err
		case len(m.blocks[b].Points) > 1:
			// An exception on a merged block: find the point that
			// caused it by reading them one by one, now and later.
			m.split[b], m.state[b] = true, blockSplit
			answered = true
		default:
			m.state[b] = st
			answered = true
		}
	}
	for k, h := range due {
		i := m.index(h)
		if i < 0 {
			out[k] = plc.Sample{Status: status.BadNodeIDUnknown}
			continue
		}
		t := &m.tags[i]
		b := t.block
		switch st := m.state[b]; st {
		case status.Good:
			out[k] = m.decode(t, m.data[b], m.blocks[b].Start)
		case blockSplit:
			var ok bool
			out[k], ok = m.readAlone(ctx, t)
			if ok {
				answered = true
			}
		default:
			out[k] = plc.Sample{Status: st}
		}
	}
	if !answered && lastErr != nil {
		return fmt.Errorf("devices[%s]: %w: %w", m.name, statusOf(lastErr), lastErr)
	}
	return nil
}

// readAlone reads the point of t by itself (a split block) and reports
// whether the device answered.
func (m *modbusDevice) readAlone(ctx context.Context, t *mtag) (plc.Sample, bool) {
	if st := m.down[t.client]; st != 0 {
		return plc.Sample{Status: st}, false
	}
	if err := ctx.Err(); err != nil {
		return plc.Sample{Status: plc.StatusOf(err)}, false
	}
	p := &t.cfg.p
	data, err := m.clients[t.client].Read(m.req(ctx), p.Area, p.Address, uint16(p.Span()), m.one)
	if err != nil {
		st := m.failed(err)
		if plc.IsCommunication(st) {
			m.down[t.client] = st
			return plc.Sample{Status: st}, false
		}
		return plc.Sample{Status: st}, true
	}
	m.one = data[:0]
	m.okRequest(t.client)
	return m.decode(t, data, p.Address), true
}

// decode decodes t from the data of a read starting at start.
func (m *modbusDevice) decode(t *mtag, data []byte, start uint16) plc.Sample {
	v, err := t.cfg.p.Decode(data, start, m.def)
	if err != nil {
		return plc.Sample{Status: plc.Status(modbus.StatusOf(err))}
	}
	var pv plc.Value
	switch t.typ {
	case plc.Bool:
		pv = plc.BoolValue(v.Bool())
	case plc.Int16:
		pv = plc.Int16Value(int16(v.Int64()))
	case plc.UInt16:
		pv = plc.UInt16Value(uint16(v.Uint64()))
	case plc.Int32:
		pv = plc.Int32Value(int32(v.Int64()))
	case plc.UInt32:
		pv = plc.UInt32Value(uint32(v.Uint64()))
	case plc.Int64:
		pv = plc.Int64Value(v.Int64())
	case plc.UInt64:
		pv = plc.UInt64Value(v.Uint64())
	case plc.Float32:
		pv = plc.Float32Value(float32(v.Float64()))
	case plc.Float64:
		pv = plc.Float64Value(v.Float64())
	case plc.String:
		pv = plc.StringValue(v.Str())
	default:
		return plc.Sample{Status: status.BadConfigurationError}
	}
	return plc.Sample{Value: pv, Status: status.Good}
}

// Write implements plc.Device; see the package documentation.
func (m *modbusDevice) Write(ctx context.Context, h plc.Handle, v plc.Value) error {
	i := m.index(h)
	if i < 0 {
		return fmt.Errorf("devices[%s]: handle %d: %w", m.name, h, status.BadNodeIDUnknown)
	}
	t := &m.tags[i]
	if !t.cfg.p.Area.Writable() {
		return fmt.Errorf("devices[%s].tags[%s]: %v: %w", m.name, t.cfg.name, t.cfg.p.Area, status.BadNotWritable)
	}
	var mv modbus.Value
	switch v.Type() {
	case plc.Bool:
		mv = modbus.BoolValue(v.Bool())
	case plc.Int16, plc.Int32, plc.Int64:
		mv = modbus.IntValue(modbus.Int64, v.Int64())
	case plc.UInt16, plc.UInt32, plc.UInt64:
		mv = modbus.UintValue(modbus.Uint64, v.Bits())
	case plc.Float32, plc.Float64:
		mv = modbus.FloatValue(modbus.Float64, v.Float64())
	case plc.String:
		mv = modbus.StringValue(v.Text())
	default:
		return fmt.Errorf("devices[%s].tags[%s]: value of type %v: %w", m.name, t.cfg.name, v.Type(), status.BadTypeMismatch)
	}
	err := m.clients[t.client].WritePoint(m.req(ctx), &t.cfg.p, mv, m.def)
	if err != nil {
		st := m.failed(err)
		return fmt.Errorf("devices[%s].tags[%s]: write: %w: %w", m.name, t.cfg.name, st, err)
	}
	m.okRequest(t.client)
	return nil
}

// statusOf maps a driver error to the engine's status: the numbers are
// the same (both are OPC UA status codes).
func statusOf(err error) plc.Status { return plc.Status(modbus.StatusOf(err)) }

// failed records a failed request and returns its status.
func (m *modbusDevice) failed(err error) plc.Status {
	msg := err.Error()
	m.mu.Lock()
	m.lastErr, m.lastAt = msg, time.Now()
	m.mu.Unlock()
	return statusOf(err)
}

// okRequest records the round trip of the client's last request.
func (m *modbusDevice) okRequest(ci int32) {
	m.rtt.Store(m.clients[ci].Stats.LastRTT.Load())
}

// Stats implements plc.Device.
func (m *modbusDevice) Stats() plc.DeviceStats {
	var s plc.DeviceStats
	for _, c := range m.clients {
		sn := c.Snapshot()
		s.Requests += sn.Requests
		s.Errors += sn.Errors
		s.Timeouts += sn.Timeouts
		s.Reconnects = sn.Reconnects // the link's, the same for every unit
		s.State = sn.State.String()
	}
	s.RoundTrip = time.Duration(m.rtt.Load())
	m.mu.Lock()
	s.LastError, s.LastErrorTime = m.lastErr, m.lastAt
	m.mu.Unlock()
	return s
}
