package binding

import (
	"context"
	"fmt"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
)

// Methods of the device folders (OPC 10000-4 §5.12, Call):
//
//   - Reconnect(), on every device folder (NodeId s=<device>.Reconnect):
//     the driver drops its connection and opens it again with the next
//     poll (Engine.Reconnect). Good, or Bad_NotSupported for a device
//     whose driver cannot (GPIO), or the driver's error. Its NodeId is that
//     a tag named Reconnect would have: such a tag makes New fail.
//   - a write method added with AddWriteMethod, such as
//     sim.WriteCommand(Value UInt16): it writes one tag through the same
//     path as a Write (write-through) and returns once the device
//     confirmed it, with the device's answer as the call's status.

// addReconnect adds the Reconnect method to the folder of device.
func (b *Binding) addReconnect(device string, folder ua.NodeID) error {
	e := b.e
	return b.as.AddMethod(&addrspace.Method{
		ID:          ua.NewStringNodeID(b.ns, device+".Reconnect"),
		BrowseName:  ua.QualifiedName{NamespaceIndex: b.ns, Name: "Reconnect"},
		Description: text("Drops the connection to the device; the next poll opens it again"),
		Object:      folder,
		Handler: func(ctx context.Context, _ ua.NodeID, _ []ua.Variant) (ua.StatusCode, []ua.Variant) {
			return e.Reconnect(ctx, device), nil
		},
	})
}

// AddWriteMethod adds method name to the folder of device (NodeId
// s=<device>.<name>) with one input argument, Value, of the DataType of
// read-write tag, and no output: a call writes Value to the tag through
// the engine and returns when the device confirmed it (Good) or failed
// (Bad_Timeout, Bad_CommunicationError, the mapped Modbus exception), or
// when the server stops waiting (Bad_Timeout). The tag's new value is in
// the image of the cycle that wrote it, so a client that then waits for a
// data change of a status tag waits only for the device's own reaction.
func (b *Binding) AddWriteMethod(device, name, tag string) error {
	h, ok := b.e.Lookup(device, tag)
	if !ok {
		return fmt.Errorf("binding: method %s.%s: no tag %s.%s", device, name, device, tag)
	}
	pt := b.e.Tag(h)
	if pt.Access != plc.ReadWrite {
		return fmt.Errorf("binding: method %s.%s: tag %s.%s is not read-write", device, name, device, tag)
	}
	e := b.e
	return b.as.AddMethod(&addrspace.Method{
		ID:          ua.NewStringNodeID(b.ns, device+"."+name),
		BrowseName:  ua.QualifiedName{NamespaceIndex: b.ns, Name: name},
		Description: text(fmt.Sprintf("Writes %s and returns when the device confirmed it", tag)),
		Object:      ua.NewStringNodeID(b.ns, device),
		InputArguments: []ua.Argument{{
			Name:        "Value",
			DataType:    ua.NewNumericNodeID(0, dataTypes[pt.Type]),
			ValueRank:   addrspace.ValueRankScalar,
			Description: text("the value to write to " + tag),
		}},
		Handler: func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
			v, ok := plcValue(in[0])
			if !ok {
				return status.BadTypeMismatch, nil
			}
			st, p := writeTag(e, h, v)
			if p == nil {
				return st, nil
			}
			select {
			case st = <-p:
				return st, nil
			case <-ctx.Done():
				return status.BadTimeout, nil
			}
		},
	})
}
