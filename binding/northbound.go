package binding

import (
	"context"
	"fmt"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
)

// WriteTag writes v to tag device.name through the address space, as a
// client's Write of the tag's Value with user's rights is made: the same
// access, type and range checks, and the device's answer, waited for up
// to ctx (Bad_Timeout after it).
func (b *Binding) WriteTag(ctx context.Context, user addrspace.User, device, name string, v plc.Value) ua.StatusCode {
	wv := ua.WriteValue{NodeID: b.NodeID(device, name), AttributeID: uint32(ua.AttributeIDValue)}
	setVariant(&wv.Value.Value, v)
	st, p := b.as.WriteStart(&wv, user)
	if p == nil {
		return st
	}
	select {
	case st := <-p:
		return st
	case <-ctx.Done():
		return status.BadTimeout
	}
}

// DiagVar is one variable of a Diagnostics folder that AddDiagnostics
// adds: Get sets its value (of DataType, an id of namespace 0).
type DiagVar struct {
	Name     string
	DataType uint32
	Desc     string
	Get      func(v *ua.Variant)
}

// AddDiagnostics adds the folder Diagnostics/<name> (NodeId
// s=<name>) with vars as its variables (s=<name>.<var>).
func (b *Binding) AddDiagnostics(name, desc string, vars []DiagVar) error {
	parent := ua.NewStringNodeID(b.dns, "Diagnostics")
	folder := ua.NewStringNodeID(b.dns, name)
	if err := b.as.AddNode(&addrspace.Node{
		ID:          folder,
		Class:       ua.NodeClassObject,
		BrowseName:  ua.QualifiedName{NamespaceIndex: b.dns, Name: name},
		Description: text(desc),
	},
		ref(id.Organizes, true, parent),
		ref(id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.FolderType)),
	); err != nil {
		return fmt.Errorf("binding: Diagnostics/%s: %w", name, err)
	}
	src := b.as.AddSource(addrspace.SourceFunc(func(h uint32, dv *ua.DataValue) {
		vars[h].Get(&dv.Value)
		dv.SourceTimestamp = time.Now()
	}))
	for k, v := range vars {
		if err := b.addDiagVar(folder, ua.NewStringNodeID(b.dns, name+"."+v.Name), v.Name, v.DataType, v.Desc, src, uint32(k)); err != nil {
			return err
		}
	}
	return nil
}
