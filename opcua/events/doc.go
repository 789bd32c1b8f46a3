// Package events is OPC UA's event filtering (OPC 10000-4 §7.7 and
// §7.22.3): an EventFilter is compiled once, against a Model of the
// server's event types and their fields, into a Filter that decides each
// event and selects its fields without allocating. It knows nothing of
// where events come from. See docs/events.md.
package events
