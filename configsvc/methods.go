package configsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc/config"
)

// uncertain is the status of a method that ran and could not do what it
// was asked; its outputs say why (OPC 11030 §5.2).
const uncertain = ua.StatusCode(0x40000000)

func arg(name string, dt uint32, rank int32, desc string) ua.Argument {
	return ua.Argument{Name: name, DataType: ua.NewNumericNodeID(0, dt), ValueRank: rank, Description: text(desc)}
}

const (
	scalar = addrspace.ValueRankScalar
	array  = addrspace.ValueRankOneDimension
)

// addFile adds ConfigurationFile, a FileType object holding the current
// document.
func (s *Service) addFile(obj ua.NodeID) error {
	file := s.nid("ConfigurationFile")
	if err := s.as.AddNode(&addrspace.Node{
		ID:          file,
		Class:       ua.NodeClassObject,
		BrowseName:  ua.QualifiedName{NamespaceIndex: s.ns, Name: "ConfigurationFile"},
		Description: text("The current configuration document (the JSON of --config); closing a handle opened for writing applies what was written"),
	},
		ref(id.HasComponent, true, obj),
		ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.FileType)),
	); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		dt   uint32
		v    ua.Variant
	}{
		{"Size", id.UInt64, ua.MustVariant(uint64(0))},
		{"Writable", id.Boolean, ua.MustVariant(true)},
		{"UserWritable", id.Boolean, ua.MustVariant(true)},
		{"OpenCount", id.UInt16, ua.MustVariant(uint16(0))},
		{"MimeType", id.String, ua.MustVariant("application/json")},
	} {
		if err := s.as.AddProperty(file, s.nid("ConfigurationFile."+p.name), ua.QualifiedName{Name: p.name}, p.dt, p.v); err != nil {
			return err
		}
	}
	handle := arg("FileHandle", id.UInt32, scalar, "")
	readers := uint32(configReaders)
	for _, m := range []addrspace.Method{
		{BrowseName: ua.QualifiedName{Name: "Open"}, InputArguments: []ua.Argument{arg("Mode", id.Byte, scalar, "1 read; 2 write (6: erase existing first, 10: append)")},
			OutputArguments: []ua.Argument{handle}, Handler: s.fileOpen},
		{BrowseName: ua.QualifiedName{Name: "Close"}, InputArguments: []ua.Argument{handle}, Handler: s.fileClose},
		{BrowseName: ua.QualifiedName{Name: "Read"}, InputArguments: []ua.Argument{handle, arg("Length", id.Int32, scalar, "")},
			OutputArguments: []ua.Argument{arg("Data", id.ByteString, scalar, "")}, Handler: s.fileMethod((*server.FileHandles).Read)},
		{BrowseName: ua.QualifiedName{Name: "Write"}, InputArguments: []ua.Argument{handle, arg("Data", id.ByteString, scalar, "")}, Handler: s.fileMethod((*server.FileHandles).Write)},
		{BrowseName: ua.QualifiedName{Name: "GetPosition"}, InputArguments: []ua.Argument{handle},
			OutputArguments: []ua.Argument{arg("Position", id.UInt64, scalar, "")}, Handler: s.fileMethod((*server.FileHandles).GetPosition)},
		{BrowseName: ua.QualifiedName{Name: "SetPosition"}, InputArguments: []ua.Argument{handle, arg("Position", id.UInt64, scalar, "")}, Handler: s.fileMethod((*server.FileHandles).SetPosition)},
	} {
		m.ID = s.nid("ConfigurationFile." + m.BrowseName.Name)
		m.Object = file
		m.Roles = readers
		if err := s.as.AddMethod(&m); err != nil {
			return err
		}
	}
	return nil
}

// addMethods adds the methods of Objects/Configuration.
func (s *Service) addMethods(obj ua.NodeID) error {
	doc := arg("Document", id.ByteString, scalar, "a configuration document, the JSON of --config")
	newVersion := arg("NewVersion", id.UInt32, scalar, "the version applied; 0 when nothing changed")
	problems := arg("Problems", id.String, array, "why nothing changed: each \"path: message\"; empty when applied")
	comment := arg("Comment", id.String, scalar, "for the history")
	readers, changers := uint32(configReaders), uint32(configChangers)
	for _, m := range []addrspace.Method{
		{BrowseName: s.qn("Validate"), Description: text("Checks a document as a whole, as edged --check-config does; changes nothing"),
			InputArguments: []ua.Argument{doc}, OutputArguments: []ua.Argument{problems}, Handler: s.validate, Roles: readers},
		{BrowseName: s.qn("Apply"), Description: text("Applies a document live if ExpectedVersion is current (0: any); with ConfirmWithinMs > 0 it is reverted unless confirmed in time"),
			InputArguments: []ua.Argument{doc, arg("ExpectedVersion", id.UInt32, scalar, "the version the document was made from; 0: any"),
				arg("ConfirmWithinMs", id.UInt32, scalar, "0: no confirmation needed"), comment},
			OutputArguments: []ua.Argument{newVersion, problems}, Handler: s.apply, Roles: changers},
		{BrowseName: s.qn("Confirm"), Description: text("Confirms a version applied with ConfirmWithinMs"),
			InputArguments: []ua.Argument{arg("Version", id.UInt32, scalar, "")}, OutputArguments: []ua.Argument{problems}, Handler: s.confirm, Roles: changers},
		{BrowseName: s.qn("Rollback"), Description: text("Applies a stored version again, as a new version"),
			InputArguments: []ua.Argument{arg("Version", id.UInt32, scalar, ""), comment}, OutputArguments: []ua.Argument{newVersion, problems}, Handler: s.rollback, Roles: changers},
		{BrowseName: s.qn("GetHistory"), Description: text("The stored versions, oldest first"),
			OutputArguments: []ua.Argument{arg("Versions", id.UInt32, array, ""), arg("Times", id.UtcTime, array, ""), arg("Users", id.String, array, ""),
				arg("Clients", id.String, array, "the client certificate thumbprints"), arg("Comments", id.String, array, ""),
				arg("Summaries", id.String, array, "devices and tags added, removed, changed"), arg("States", id.String, array, "applied, pending, confirmed, reverted")},
			Handler: s.history, Roles: readers},
		{BrowseName: s.qn("AddTags"), Description: text("Adds the tags of a CSV (the format of --import-csv) to a device"),
			InputArguments:  []ua.Argument{arg("Device", id.String, scalar, ""), arg("Csv", id.String, scalar, "")},
			OutputArguments: []ua.Argument{newVersion, problems}, Handler: s.addTags, Roles: changers},
		{BrowseName: s.qn("RemoveTags"), Description: text("Removes tags of a device"),
			InputArguments:  []ua.Argument{arg("Device", id.String, scalar, ""), arg("Names", id.String, array, "")},
			OutputArguments: []ua.Argument{newVersion, problems}, Handler: s.removeTags, Roles: changers},
		{BrowseName: s.qn("AddDevice"), Description: text("Adds a device (the JSON of one element of devices)"),
			InputArguments: []ua.Argument{arg("Json", id.String, scalar, "")}, OutputArguments: []ua.Argument{newVersion, problems}, Handler: s.addDevice, Roles: changers},
		{BrowseName: s.qn("RemoveDevice"), Description: text("Removes a device and its tags"),
			InputArguments: []ua.Argument{arg("Name", id.String, scalar, "")}, OutputArguments: []ua.Argument{newVersion, problems}, Handler: s.removeDevice, Roles: changers},
	} {
		m.ID = s.nid("Configuration." + m.BrowseName.Name)
		m.Object = obj
		if err := s.as.AddMethod(&m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) qn(name string) ua.QualifiedName {
	return ua.QualifiedName{NamespaceIndex: s.ns, Name: name}
}

// result is the outputs NewVersion and Problems, with Good or uncertain.
func result(v uint32, problems []string) (ua.StatusCode, []ua.Variant) {
	st := status.Good
	if len(problems) > 0 {
		st = uncertain
	}
	if problems == nil {
		problems = []string{}
	}
	return st, []ua.Variant{ua.MustVariant(v), ua.MustVariant(problems)}
}

func (s *Service) validate(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	if _, st := caller(ctx, configReaders, false); st != status.Good {
		return st, nil
	}
	doc, _ := in[0].ByteString()
	_, problems := s.Parse(doc)
	if problems == nil {
		problems = []string{}
	}
	return status.Good, []ua.Variant{ua.MustVariant(problems)}
}

func (s *Service) apply(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	c, st := caller(ctx, configChangers, true)
	if st != status.Good {
		s.refused(c, st, "apply")
		return st, nil
	}
	doc, _ := in[0].ByteString()
	expected, _ := in[1].Uint32()
	within, _ := in[2].Uint32()
	comment, _ := in[3].StringValue()
	s.mu.Lock()
	defer s.mu.Unlock()
	v, problems := s.change(ctx, c, doc, expected, time.Duration(within)*time.Millisecond, comment, "apply")
	return result(v, problems)
}

func (s *Service) confirm(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	c, st := caller(ctx, configChangers, true)
	if st != status.Good {
		s.refused(c, st, "confirm")
		return st, nil
	}
	v, _ := in[0].Uint32()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil || s.pending.version != v {
		return uncertain, []ua.Variant{ua.MustVariant([]string{fmt.Sprintf("Version: %d is not waiting for Confirm", v)})}
	}
	if _, err := s.opts.Store.SetState(v, StateConfirmed); err != nil {
		return uncertain, []ua.Variant{ua.MustVariant([]string{"store: " + err.Error()})}
	}
	s.pending.timer.Stop()
	s.pending = nil
	s.audit(c, "confirm", v, "")
	s.publish()
	return status.Good, []ua.Variant{ua.MustVariant([]string{})}
}

func (s *Service) rollback(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	c, st := caller(ctx, configChangers, true)
	if st != status.Good {
		s.refused(c, st, "rollback")
		return st, nil
	}
	v, _ := in[0].Uint32()
	comment, _ := in[1].StringValue()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, doc, ok := s.opts.Store.Get(v)
	if !ok {
		return result(0, []string{fmt.Sprintf("Version: %d is not stored (GetHistory lists those that are)", v)})
	}
	if comment == "" {
		comment = fmt.Sprintf("rollback to version %d", v)
	}
	nv, problems := s.change(ctx, c, doc, 0, 0, comment, "rollback")
	return result(nv, problems)
}

func (s *Service) history(ctx context.Context, _ ua.NodeID, _ []ua.Variant) (ua.StatusCode, []ua.Variant) {
	if _, st := caller(ctx, configReaders, false); st != status.Good {
		return st, nil
	}
	h := s.opts.Store.History()
	vs, ts := make([]uint32, len(h)), make([]time.Time, len(h))
	us, cs, cms, ss, sts := make([]string, len(h)), make([]string, len(h)), make([]string, len(h)), make([]string, len(h)), make([]string, len(h))
	for i, m := range h {
		vs[i], ts[i], us[i], cs[i], cms[i], ss[i], sts[i] = m.Version, m.Time, m.User, m.Client, m.Comment, m.Summary, m.State
	}
	return status.Good, []ua.Variant{ua.MustVariant(vs), ua.MustVariant(ts), ua.MustVariant(us), ua.MustVariant(cs),
		ua.MustVariant(cms), ua.MustVariant(ss), ua.MustVariant(sts)}
}

// edit applies the current document changed by f, which returns the
// comment or a problem.
func (s *Service) edit(ctx context.Context, action string, f func(c *config.Config) (string, error)) (ua.StatusCode, []ua.Variant) {
	c, st := caller(ctx, configChangers, true)
	if st != status.Good {
		s.refused(c, st, action)
		return st, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, doc, err := s.opts.Store.Current()
	if err != nil {
		return result(0, []string{"store: " + err.Error()})
	}
	conf, err := config.Parse(doc)
	if err != nil {
		return result(0, []string{"the current version does not parse: " + err.Error()})
	}
	comment, err := f(conf)
	if err != nil {
		return result(0, []string{err.Error()})
	}
	next, err := json.Marshal(conf)
	if err != nil {
		return result(0, []string{err.Error()})
	}
	v, problems := s.change(ctx, c, next, cur.Version, 0, comment, action)
	return result(v, problems)
}

// device returns the device name of conf, or an error naming it.
func device(conf *config.Config, name string) (*config.Device, error) {
	d, ok := conf.Device(name)
	if !ok {
		return nil, fmt.Errorf("Device: no device %q", name)
	}
	return d, nil
}

func (s *Service) addTags(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	name, _ := in[0].StringValue()
	csv, _ := in[1].StringValue()
	return s.edit(ctx, "add tags", func(conf *config.Config) (string, error) {
		if err := conf.ImportCSV(strings.NewReader(csv), name); err != nil {
			return "", fmt.Errorf("Csv: %w", err)
		}
		return "AddTags " + name, nil
	})
}

func (s *Service) removeTags(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	name, _ := in[0].StringValue()
	names, _ := in[1].Value().([]string)
	return s.edit(ctx, "remove tags", func(conf *config.Config) (string, error) {
		d, err := device(conf, name)
		if err != nil {
			return "", err
		}
		for _, n := range names {
			if !slices.ContainsFunc(d.Tags, func(t config.Tag) bool { return t.Name == n }) {
				return "", fmt.Errorf("Names: device %s has no tag %q", name, n)
			}
		}
		d.Tags = slices.DeleteFunc(d.Tags, func(t config.Tag) bool { return slices.Contains(names, t.Name) })
		return fmt.Sprintf("RemoveTags %s: %s", name, strings.Join(names, ",")), nil
	})
}

func (s *Service) addDevice(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	js, _ := in[0].StringValue()
	return s.edit(ctx, "add device", func(conf *config.Config) (string, error) {
		// Through a whole document, so that the device is read as
		// strictly as in a file (unknown fields are problems).
		if !json.Valid([]byte(js)) {
			return "", fmt.Errorf("Json: not JSON")
		}
		base, err := json.Marshal(conf)
		if err != nil {
			return "", err
		}
		var whole map[string]json.RawMessage
		var devs []json.RawMessage
		json.Unmarshal(base, &whole)
		json.Unmarshal(whole["devices"], &devs)
		whole["devices"], _ = json.Marshal(append(devs, json.RawMessage(js)))
		b, _ := json.Marshal(whole)
		next, err := config.Parse(b)
		if next == nil {
			return "", fmt.Errorf("Json: %w", err)
		}
		d := next.Devices[len(next.Devices)-1]
		conf.Devices = append(conf.Devices, d)
		return "AddDevice " + d.Name, nil
	})
}

func (s *Service) removeDevice(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	name, _ := in[0].StringValue()
	return s.edit(ctx, "remove device", func(conf *config.Config) (string, error) {
		if _, err := device(conf, name); err != nil {
			return "", fmt.Errorf("Name: %w", err)
		}
		conf.Devices = slices.DeleteFunc(conf.Devices, func(d config.Device) bool { return d.Name == name })
		return "RemoveDevice " + name, nil
	})
}

// refused audits a change refused for want of rights.
func (s *Service) refused(c server.Caller, st ua.StatusCode, action string) {
	s.audit(c, "refused "+action, 0, st.String())
}

// The FileType methods: server.FileHandles does the mechanics; Open
// checks the caller's rights and fills the handle, Close of a handle
// written applies what it holds.

func (s *Service) fileOpen(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	m, _ := in[0].Uint8()
	write := m&server.FileWrite != 0
	_, st := caller(ctx, configReaders, false)
	if write {
		_, st = caller(ctx, configChangers, true)
	}
	if st != status.Good {
		return st, nil
	}
	mode, st := server.ParseFileMode(in, true, false)
	if st != status.Good {
		return st, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, doc, err := s.opts.Store.Current()
	if err != nil {
		return status.BadInternalError, nil
	}
	f := &server.FileHandle{Write: write, Version: cur.Version}
	switch {
	case mode&server.FileEraseExisting != 0:
	case write && mode&server.FileAppend != 0:
		f.Data = pretty(doc)
		f.Pos = len(f.Data)
	default:
		f.Data = pretty(doc)
	}
	h, st := s.files.Open(ctx, f)
	if st != status.Good {
		return st, nil
	}
	s.publish()
	return status.Good, []ua.Variant{ua.MustVariant(h)}
}

func (s *Service) fileClose(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, st := s.files.Close(ctx, in)
	if st != status.Good {
		return st, nil
	}
	s.publish()
	if !f.Write {
		return status.Good, nil
	}
	// Closing what was written applies it, on the version it was opened
	// on; Validate tells the problems of a refused one.
	c, st := caller(ctx, configChangers, true)
	if st != status.Good {
		return st, nil
	}
	if _, problems := s.change(ctx, c, f.Data, f.Version, 0, "written to ConfigurationFile", "apply"); len(problems) > 0 {
		s.audit(c, "refused apply", 0, strings.Join(problems, "; "))
		return status.BadConfigurationError, nil
	}
	return status.Good, nil
}

func (s *Service) fileMethod(f func(*server.FileHandles, context.Context, []ua.Variant) (ua.StatusCode, []ua.Variant)) func(context.Context, ua.NodeID, []ua.Variant) (ua.StatusCode, []ua.Variant) {
	return func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
		return f(&s.files, ctx, in)
	}
}

func ref(typ uint32, inverse bool, target ua.NodeID) addrspace.Reference {
	return addrspace.Reference{TypeID: ua.NewNumericNodeID(0, typ), IsInverse: inverse, Target: ua.ExpandedNodeID{NodeID: target}}
}

func text(s string) ua.LocalizedText {
	if s == "" {
		return ua.LocalizedText{}
	}
	return ua.LocalizedText{Locale: "en", Text: s}
}
