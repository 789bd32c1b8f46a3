package sparkplug

import (
	"encoding/json"
	"errors"
	"strings"
)

// Namespace is the first element of every Sparkplug B topic.
const Namespace = "spBv1.0"

// Message types (the third element of a topic).
const (
	NBIRTH = "NBIRTH"
	NDEATH = "NDEATH"
	DBIRTH = "DBIRTH"
	DDEATH = "DDEATH"
	NDATA  = "NDATA"
	DDATA  = "DDATA"
	NCMD   = "NCMD"
	DCMD   = "DCMD"
	STATE  = "STATE"
)

// AppendTopic appends the topic spBv1.0/group/typ/node[/device] to b.
func AppendTopic(b []byte, group, typ, node, device string) []byte {
	b = append(b, Namespace...)
	b = append(append(b, '/'), group...)
	b = append(append(b, '/'), typ...)
	b = append(append(b, '/'), node...)
	if device != "" {
		b = append(append(b, '/'), device...)
	}
	return b
}

// StateTopic is the topic of primary host host's STATE messages.
func StateTopic(host string) string { return Namespace + "/" + STATE + "/" + host }

// Topic is a parsed Sparkplug B topic of an edge node.
type Topic struct {
	Group, Type, Node, Device string
}

// ParseTopic parses an edge node's topic (not a STATE topic).
func ParseTopic(s string) (Topic, bool) {
	p := strings.Split(s, "/")
	if len(p) < 4 || len(p) > 5 || p[0] != Namespace {
		return Topic{}, false
	}
	t := Topic{Group: p[1], Type: p[2], Node: p[3]}
	if len(p) == 5 {
		t.Device = p[4]
	}
	return t, true
}

// ValidID reports whether s may be a group, edge node or device id: not
// empty, and none of the characters MQTT and Sparkplug reserve in topic
// elements ('/', '+', '#').
func ValidID(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/+#") && len(s) <= 256
}

// State is a primary host's STATE message (Sparkplug 3.0: JSON).
type State struct {
	Online    bool   `json:"online"`
	Timestamp uint64 `json:"timestamp"`
}

// ParseState parses a STATE payload. Sparkplug 2.2's plain "ONLINE" and
// "OFFLINE" are read too, as hosts of that version still send them.
func ParseState(b []byte) (State, error) {
	switch string(b) {
	case "ONLINE":
		return State{Online: true}, nil
	case "OFFLINE":
		return State{}, nil
	}
	var s struct {
		Online    *bool  `json:"online"`
		Timestamp uint64 `json:"timestamp"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Online == nil {
		return State{}, errors.New("sparkplug: a STATE payload without \"online\"")
	}
	return State{Online: *s.Online, Timestamp: s.Timestamp}, nil
}
