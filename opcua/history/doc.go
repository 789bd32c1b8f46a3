// Package history is OPC UA historical access (OPC 10000-11) for
// variables, over any store of raw values: raw, modified-free, at-time
// and processed reads with the aggregates of OPC 10000-13, their
// continuation points, and the calculation of each aggregate. It knows
// nothing of where the values are kept; the server gives it a Reader.
package history
