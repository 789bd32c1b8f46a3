// Package addrspace is an in-memory OPC UA address space: nodes with their
// attributes and references, namespace 0 as generated from the normative
// NodeSet, and the attribute and view services' semantics on it (Read,
// Write, Browse, BrowseNext, TranslateBrowsePathsToNodeIds). It knows
// nothing of sessions or the wire: the server calls it once per operation
// with decoded request values and caller-owned result values, so the read
// path allocates nothing.
//
// Variables may be backed by an external ValueSource (the scan engine's
// process image): a Read request takes one snapshot of each source it
// touches, so the values of one request never mix two images, and never
// blocks the source's writer.
package addrspace

import (
	"time"

	"github.com/edged/edged/opcua/ua"
)

// Reference is a reference from the node that holds it.
type Reference struct {
	TypeID    ua.NodeID
	IsInverse bool
	Target    ua.ExpandedNodeID
}

// Node is a node of any node class; the fields that do not belong to its
// class are zero.
type Node struct {
	ID            ua.NodeID
	Class         ua.NodeClass
	BrowseName    ua.QualifiedName
	DisplayName   ua.LocalizedText
	Description   ua.LocalizedText
	WriteMask     uint32
	UserWriteMask uint32
	References    []Reference

	// Variable and VariableType.
	Value                   ua.DataValue // the value when Source is nil
	DataType                ua.NodeID
	ValueRank               int32
	ArrayDimensions         []uint32
	AccessLevel             uint8
	UserAccessLevel         uint8
	MinimumSamplingInterval float64
	Historizing             bool
	// Source, when set, serves the value: Handle identifies the variable in
	// the source's snapshots.
	Source ValueSource
	Handle uint32

	// Object.
	EventNotifier uint8
	// ObjectType, VariableType, ReferenceType, DataType.
	IsAbstract bool
	// ReferenceType.
	Symmetric   bool
	InverseName ua.LocalizedText
	// View.
	ContainsNoLoops bool
	// Method.
	Executable     bool
	UserExecutable bool
}

// ValueSource serves variable values in consistent snapshots.
type ValueSource interface {
	// Snapshot returns the current image. It must not block on the writer
	// (an atomic pointer load, say).
	Snapshot() Snapshot
}

// Snapshot is one immutable image of a ValueSource.
type Snapshot interface {
	// Value writes the value, status and source timestamp of the variable
	// with handle h into dv.
	Value(h uint32, dv *ua.DataValue)
}

// Clock gives the server timestamp; tests replace it.
type Clock func() time.Time
