package binding

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
)

// The configuration of a device and of its tags is shown read-only as
// properties: the device folder's have NodeIds s=<device>/<Name> (a '/'
// cannot be in a tag name, so they cannot clash with a tag), a tag's
// s=<device>.<tag>.<Name>.

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
		if err := b.as.AddProperty(folder, nid, ua.QualifiedName{NamespaceIndex: b.ns, Name: p.name}, p.dt, p.v); err != nil {
			return err
		}
	}
	return nil
}

// removeDeviceProperties removes what addDeviceProperties added to the
// folder of device name.
func (b *Binding) removeDeviceProperties(name string) {
	for _, p := range []string{"Kind", "Address", "Unit", "TimeoutMs", "NoCommTimeoutMs"} {
		b.as.RemoveNode(ua.NewStringNodeID(b.ns, name+"/"+p))
	}
}

// tagProperties gives tag t of cfg, whose engine's tag has address
// engineAddr, its properties Address and ScanClass: both from a set shared
// by the tags of its scan class (tagProps), or, for a tag with a unit id
// or a bit, whose Address says so (or one whose engine's address is not
// its own), Address appended to props and ScanClass from the set.
func (b *Binding) tagProperties(props []addrspace.Property, cfg *config.Config, t *config.Tag, engineAddr string) ([]addrspace.Property, *tagProps) {
	own := t.Unit != nil || t.Bit != nil || engineAddr != t.Address
	if own {
		addr := t.Address
		if t.Unit != nil {
			addr = fmt.Sprintf("%s (unit %d)", addr, *t.Unit)
		}
		if t.Bit != nil {
			addr = fmt.Sprintf("%s bit %d", addr, *t.Bit)
		}
		props = append(props, addrspace.Property{Name: ua.QualifiedName{NamespaceIndex: b.ns, Name: "Address"}, DataType: id.String, Value: ua.MustVariant(addr)})
	}
	key := tagPropsKey{class: fmt.Sprintf("%s (%d ms)", t.ScanClass, periodOf(cfg, t)), address: !own}
	set := b.tagProps[key]
	if set == nil {
		set = &tagProps{e: b.e, class: ua.MustVariant(key.class), address: key.address}
		if key.address {
			set.names = append(set.names, addrspace.PropertyName{Name: ua.QualifiedName{NamespaceIndex: b.ns, Name: "Address"}, DataType: id.String})
		}
		set.names = append(set.names, addrspace.PropertyName{Name: ua.QualifiedName{NamespaceIndex: b.ns, Name: "ScanClass"}, DataType: id.String})
		if b.tagProps == nil {
			b.tagProps = make(map[tagPropsKey]*tagProps)
		}
		b.tagProps[key] = set
	}
	return props, set
}

// tagPropsKey tells the tagProps sets apart: by the ScanClass text, and
// whether the set serves Address.
type tagPropsKey struct {
	class   string
	address bool
}

// tagProps serves the properties that the tags of a scan class have
// alike: ScanClass, the class's text, and (with address) before it
// Address, the engine's address of the tag. A tag's Variable stores none
// of them (docs/binding.md).
type tagProps struct {
	e       *plc.Engine
	names   []addrspace.PropertyName
	class   ua.Variant
	address bool
}

func (p *tagProps) PropertyNames() []addrspace.PropertyName { return p.names }

func (p *tagProps) PropertyValue(h uint32, i int) ua.Variant {
	if p.address && i == 0 {
		var v ua.Variant
		v.SetString(p.e.Tag(plc.Handle(h)).Address)
		return v
	}
	return p.class
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
// Unchanged tags are not touched. Apply, as New, does not keep next: it
// compares digests of what it shows with next's.
func (b *Binding) Apply(next *config.Config) error {
	if err := b.Check(next); err != nil {
		return err
	}
	stays := map[string]bool{}
	for i := range next.Devices {
		stays[next.Devices[i].Name] = true
	}
	for name := range b.shown {
		if !stays[name] {
			b.as.RemoveNode(ua.NewStringNodeID(b.ns, name))
			delete(b.shown, name)
		}
	}
	for i := range next.Devices {
		d := &next.Devices[i]
		sd := b.shown[d.Name]
		if sd == nil {
			if err := b.addDevice(next, d); err != nil {
				return err
			}
			continue
		}
		if settings := deviceDigest(d); settings != sd.settings {
			b.removeDeviceProperties(d.Name)
			if err := b.addDeviceProperties(d); err != nil {
				return err
			}
			sd.settings = settings
		}
		inNext := make(map[string]bool, len(d.Tags))
		for _, t := range d.Tags {
			inNext[t.Name] = true
		}
		for _, st := range sd.tags {
			if !inNext[st.name] {
				b.as.RemoveNode(b.NodeID(d.Name, st.name))
			}
		}
		folder := ua.NewStringNodeID(b.ns, d.Name)
		shown := make([]shownTag, 0, len(d.Tags))
		for j := range d.Tags {
			t := &d.Tags[j]
			dg := tagDigest(next, t)
			old, ok := sd.digest(t.Name)
			if !ok || old != dg {
				if ok {
					b.as.RemoveNode(b.NodeID(d.Name, t.Name))
				}
				if err := b.addTag(next, d, t, folder); err != nil {
					// Shown now: the tags before t, and those after it
					// that were shown before.
					for _, u := range d.Tags[j+1:] {
						if dg, ok := sd.digest(u.Name); ok {
							shown = append(shown, shownTag{name: u.Name, digest: dg})
						}
					}
					sd.setTags(shown)
					return fmt.Errorf("binding: devices[%s].tags[%s]: %w", d.Name, t.Name, err)
				}
			}
			shown = append(shown, shownTag{name: t.Name, digest: dg})
		}
		sd.setTags(shown)
	}
	return b.syncDiagDevices()
}

// shownDevice is what the address space shows of a device, as digests:
// of its settings (the device without its tags) and of each tag with its
// scan period.
type shownDevice struct {
	settings [sha256.Size]byte
	tags     []shownTag // sorted by name
}

// shownTag is a tag's name and digest. A sorted slice of them takes 24
// bytes a tag, a map by name about 54.
type shownTag struct {
	name   string
	digest uint64
}

// digest returns the digest of tag name, false if it is not shown.
func (sd *shownDevice) digest(name string) (uint64, bool) {
	i, ok := slices.BinarySearchFunc(sd.tags, name, func(t shownTag, name string) int { return strings.Compare(t.name, name) })
	if !ok {
		return 0, false
	}
	return sd.tags[i].digest, true
}

// setTags makes tags, in any order, the shown tags.
func (sd *shownDevice) setTags(tags []shownTag) {
	slices.SortFunc(tags, func(a, b shownTag) int { return strings.Compare(a.name, b.name) })
	sd.tags = slices.Clip(tags)
}

// deviceDigest is the digest of d's settings.
func deviceDigest(d *config.Device) [sha256.Size]byte {
	x := *d
	x.Tags = nil
	b, err := json.Marshal(&x)
	if err != nil {
		panic(err) // the configuration is plain data
	}
	return sha256.Sum256(b)
}

// tagDigest is the digest of tag t of cfg and of its scan period: the
// first 8 bytes of a SHA-256.
func tagDigest(cfg *config.Config, t *config.Tag) uint64 {
	b, err := json.Marshal(t)
	if err != nil {
		panic(err)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(periodOf(cfg, t)))
	if t.History != nil {
		// The store's settings are in its HA Configuration.
		h, err := json.Marshal(cfg.History)
		if err != nil {
			panic(err)
		}
		b = append(b, h...)
	}
	sum := sha256.Sum256(b)
	return binary.BigEndian.Uint64(sum[:8])
}

// periodOf is the scan period of t in cfg, in milliseconds.
func periodOf(cfg *config.Config, t *config.Tag) int {
	return cfg.ScanClasses[t.ScanClass] * cfg.BaseCycleMs
}
