package northbound

import (
	"context"
	"errors"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/sparkplug"
)

// writeTimeout bounds a DCMD write: the device's answer included.
const writeTimeout = 10 * time.Second

// deviceCommand handles a DCMD: each metric, named or by alias, is a
// write of the tag, made as Options.Write makes it with the configured
// role; refused when commands are off, the metric unknown or of another
// type than its birth said.
func (l *loop) deviceCommand(dev string, payload []byte) {
	type write struct {
		m *metric
		v plc.Value
	}
	var ws []write
	_, err := sparkplug.Decode(payload, func(sm *sparkplug.Metric) error {
		var m *metric
		if sm.Name != "" {
			m = l.lay.byName[dev+"."+sm.Name]
		} else if sm.HasAlias {
			m = l.lay.byAlias[sm.Alias]
		}
		if m == nil || m.dev.name != dev {
			l.n.cnt.refused.Add(1)
			l.n.errorf("a DCMD for %s: no metric %q (alias %d)", dev, sm.Name, sm.Alias)
			return nil
		}
		v, err := sm.As(m.dt)
		if err != nil || v.Null {
			l.n.cnt.refused.Add(1)
			l.n.errorf("a DCMD for %s.%s: not a value of data type %d as born (data type %d)", dev, m.name, m.dt, sm.Value.Type)
			return nil
		}
		ws = append(ws, write{m, plcValue(m.typ, &v)})
		return nil
	})
	if err != nil {
		l.n.cnt.refused.Add(1)
		l.n.errorf("a DCMD for %s: %v", dev, err)
		return
	}
	for _, w := range ws {
		if l.st.role == "" || l.n.opt.Write == nil {
			l.n.cnt.refused.Add(1)
			l.n.errorf("a DCMD write of %s.%s refused: northbound.sparkplug.commands is not configured", dev, w.m.name)
			continue
		}
		select {
		case l.writes <- struct{}{}:
		default:
			l.n.cnt.refused.Add(1)
			l.n.errorf("a DCMD write of %s.%s refused: %d writes are in progress", dev, w.m.name, cap(l.writes))
			continue
		}
		write, role, name, n, sem := l.n.opt.Write, l.st.role, w.m.name, l.n, l.writes
		go func(v plc.Value) {
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
			defer cancel()
			st := write(ctx, role, dev, name, v)
			if st != status.Good {
				n.cnt.refused.Add(1)
				n.errorf("a DCMD write of %s.%s: %v", dev, name, errors.New(st.Error()))
				return
			}
			n.cnt.commands.Add(1)
			n.log.Info("sparkplug: DCMD write", "tag", dev+"."+name, "value", v.String())
		}(w.v)
	}
}

// plcValue is metric value v as a value of tag type t (v's data type is
// the tag's).
func plcValue(t plc.Type, v *sparkplug.Value) plc.Value {
	if t == plc.String {
		return plc.StringValue(v.Text)
	}
	return plc.FromBits(t, v.Bits)
}
