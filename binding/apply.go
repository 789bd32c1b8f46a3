package binding

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/plc/config"
)

// The configuration of a device and of its tags is shown read-only as
// properties: the device folder's have NodeIds s=<device>/<Name> (a '/'
// cannot be in a tag name, so they cannot clash with a tag), a tag's
// s=<device>.<tag>.<Name>.

// cloneConfig returns a deep copy of c.
func cloneConfig(c *config.Config) *config.Config {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // the configuration is plain data
	}
	var out config.Config
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return &out
}

// addDeviceProperties adds the folder properties of device d: Kind,
// Address, Unit, TimeoutMs and NoCommTimeoutMs.
func (b *Binding) addDeviceProperties(d *config.Device) error {
	addr, unit, timeout := "", "", 0
	switch {
	case d.ModbusTCP != nil:
		addr, timeout = d.ModbusTCP.Address, d.ModbusTCP.TimeoutMs
		if d.ModbusTCP.UnitID != nil {
			unit = strconv.Itoa(*d.ModbusTCP.UnitID)
		}
	case d.ModbusRTU != nil:
		addr, timeout = d.ModbusRTU.Port, d.ModbusRTU.TimeoutMs
		var us []string
		for _, u := range d.ModbusRTU.Units {
			us = append(us, strconv.Itoa(u))
		}
		unit = strings.Join(us, ",")
	}
	folder := ua.NewStringNodeID(b.ns, d.Name)
	props := []struct {
		name string
		dt   uint32
		v    ua.Variant
	}{
		{"Kind", id.String, ua.MustVariant(string(d.Kind))},
		{"Address", id.String, ua.MustVariant(addr)},
		{"Unit", id.String, ua.MustVariant(unit)},
		{"TimeoutMs", id.UInt32, ua.MustVariant(uint32(timeout))},
		{"NoCommTimeoutMs", id.UInt32, ua.MustVariant(uint32(d.NoCommTimeoutMs))},
	}
	for _, p := range props {
		nid := ua.NewStringNodeID(b.ns, d.Name+"/"+p.name)
		if err := b.addPropertyAs(folder, nid, ua.QualifiedName{NamespaceIndex: b.ns, Name: p.name}, p.dt, p.v); err != nil {
			return err
		}
	}
	return nil
}

// removeDeviceProperties removes what addDeviceProperties added.
func (b *Binding) removeDeviceProperties(d *config.Device) {
	for _, name := range []string{"Kind", "Address", "Unit", "TimeoutMs", "NoCommTimeoutMs"} {
		b.as.RemoveNode(ua.NewStringNodeID(b.ns, d.Name+"/"+name))
	}
}

// appendTagProperties appends the properties Address and ScanClass of
// tag t to props. Tags of one scan class share its text.
func (b *Binding) appendTagProperties(props []addrspace.Property, cfg *config.Config, t *config.Tag) []addrspace.Property {
	addr := t.Address
	if t.Unit != nil {
		addr = fmt.Sprintf("%s (unit %d)", addr, *t.Unit)
	}
	if t.Bit != nil {
		addr = fmt.Sprintf("%s bit %d", addr, *t.Bit)
	}
	text := fmt.Sprintf("%s (%d ms)", t.ScanClass, cfg.ScanClasses[t.ScanClass]*cfg.BaseCycleMs)
	class, ok := b.classText[text]
	if !ok {
		class = ua.MustVariant(text)
		if b.classText == nil {
			b.classText = make(map[string]ua.Variant)
		}
		b.classText[text] = class
	}
	return append(props,
		addrspace.Property{Name: ua.QualifiedName{NamespaceIndex: b.ns, Name: "Address"}, DataType: id.String, Value: ua.MustVariant(addr)},
		addrspace.Property{Name: ua.QualifiedName{NamespaceIndex: b.ns, Name: "ScanClass"}, DataType: id.String, Value: class})
}

// Check reports what keeps cfg (valid for package config) from being
// shown: a tag named like a method of its device folder.
func (b *Binding) Check(cfg *config.Config) error {
	for i := range cfg.Devices {
		d := &cfg.Devices[i]
		for _, t := range d.Tags {
			if n := b.as.Node(b.NodeID(d.Name, t.Name)); t.Name == "Reconnect" || (n != nil && n.Class == ua.NodeClassMethod) {
				return fmt.Errorf("devices[%s].tags[%s].name: %q is the name of a method of the device folder", d.Name, t.Name, t.Name)
			}
		}
	}
	return nil
}

// Apply makes the address space show next, which the engine serves now
// (plc.Engine.Reconfigure returned): the folders of removed devices go
// with their tags, methods and properties; new devices and tags are
// added; a changed tag is shown anew under its NodeId (its monitored
// items go on: they follow the NodeId and the engine's handle, which
// stays); a device whose settings changed gets its properties anew.
// Unchanged tags are not touched. As New, Apply keeps next: a change is a
// configuration of its own, never the one shown changed in place.
func (b *Binding) Apply(next *config.Config) error {
	if next == b.cfg {
		return errors.New("binding: Apply of the configuration shown: a change needs a configuration of its own")
	}
	if err := b.Check(next); err != nil {
		return err
	}
	old := map[string]*config.Device{}
	for i := range b.cfg.Devices {
		old[b.cfg.Devices[i].Name] = &b.cfg.Devices[i]
	}
	stays := map[string]bool{}
	for i := range next.Devices {
		stays[next.Devices[i].Name] = true
	}
	for name := range old {
		if !stays[name] {
			b.as.RemoveNode(ua.NewStringNodeID(b.ns, name))
		}
	}
	for i := range next.Devices {
		d := &next.Devices[i]
		od := old[d.Name]
		if od == nil {
			if err := b.addDevice(next, d); err != nil {
				return err
			}
			continue
		}
		if !sameSettings(od, d) {
			b.removeDeviceProperties(od)
			if err := b.addDeviceProperties(d); err != nil {
				return err
			}
		}
		oldTags := map[string]*config.Tag{}
		for j := range od.Tags {
			oldTags[od.Tags[j].Name] = &od.Tags[j]
		}
		newTags := map[string]bool{}
		for _, t := range d.Tags {
			newTags[t.Name] = true
		}
		for name := range oldTags {
			if !newTags[name] {
				b.as.RemoveNode(b.NodeID(d.Name, name))
			}
		}
		folder := ua.NewStringNodeID(b.ns, d.Name)
		for j := range d.Tags {
			t := &d.Tags[j]
			ot := oldTags[t.Name]
			if ot != nil && reflect.DeepEqual(ot, t) && periodOf(b.cfg, ot) == periodOf(next, t) {
				continue
			}
			if ot != nil {
				b.as.RemoveNode(b.NodeID(d.Name, t.Name))
			}
			if err := b.addTag(next, d, t, folder); err != nil {
				return fmt.Errorf("binding: devices[%s].tags[%s]: %w", d.Name, t.Name, err)
			}
		}
	}
	b.cfg = next
	return b.syncDiagDevices()
}

// sameSettings reports whether a and b differ only in their tags.
func sameSettings(a, b *config.Device) bool {
	x, y := *a, *b
	x.Tags, y.Tags = nil, nil
	return reflect.DeepEqual(x, y)
}

// periodOf is the scan period of t in cfg, in milliseconds.
func periodOf(cfg *config.Config, t *config.Tag) int {
	return cfg.ScanClasses[t.ScanClass] * cfg.BaseCycleMs
}
