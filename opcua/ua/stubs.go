package ua

// Temporary stubs so that generated code compiles while the built-in
// codecs are written. DELETE this file when they exist.

import "time"

func AppendDateTime(b []byte, t time.Time) []byte { return AppendInt64(b, 0) }
func (d *Decoder) ReadDateTime() time.Time        { d.ReadInt64(); return time.Time{} }

func (v *GUID) Encode(b []byte) []byte            { return b }
func (v *GUID) Decode(d *Decoder)                 {}
func (v *NodeID) Encode(b []byte) []byte          { return b }
func (v *NodeID) Decode(d *Decoder)               {}
func (v *ExpandedNodeID) Encode(b []byte) []byte  { return b }
func (v *ExpandedNodeID) Decode(d *Decoder)       {}
func (v *QualifiedName) Encode(b []byte) []byte   { return b }
func (v *QualifiedName) Decode(d *Decoder)        {}
func (v *LocalizedText) Encode(b []byte) []byte   { return b }
func (v *LocalizedText) Decode(d *Decoder)        {}
func (v *DataValue) Encode(b []byte) []byte       { return b }
func (v *DataValue) Decode(d *Decoder)            {}
func (v *DiagnosticInfo) Encode(b []byte) []byte  { return b }
func (v *DiagnosticInfo) Decode(d *Decoder)       {}
func (v *ExtensionObject) Encode(b []byte) []byte { return b }
func (v *ExtensionObject) Decode(d *Decoder)      {}
func (v *Variant) Encode(b []byte) []byte         { return b }
func (v *Variant) Decode(d *Decoder)              {}

func RegisterBody(id NodeID, newBody func() Body) {}
