package config

import (
	"fmt"
	"math"
	"net/url"
	"strings"
)

// Northbound configures what edged publishes to the systems above the
// shop floor. Only Sparkplug B over MQTT is defined.
type Northbound struct {
	Sparkplug *Sparkplug `json:"sparkplug,omitempty"`
}

// Sparkplug makes edged a Sparkplug B 3.0 edge node: one Sparkplug device
// per device, one metric per tag. Secrets are not in the document: the
// password and the TLS key are files, named here.
type Sparkplug struct {
	// Brokers are the URLs of the broker cluster's nodes (tcp://host:1883,
	// ssl://host:8883), tried in order; 1..16.
	Brokers []string `json:"brokers"`
	// GroupID is the Sparkplug group id.
	GroupID string `json:"group_id"`
	// EdgeNodeID is the edge node id; "" is the host's name.
	EdgeNodeID string `json:"edge_node_id,omitempty"`
	// ClientID is the MQTT client id; "" is "edged-<group>-<node>".
	ClientID string `json:"client_id,omitempty"`
	// KeepAliveS is the MQTT keep-alive, 5..3600 seconds.
	KeepAliveS int `json:"keep_alive_s"`
	// Username and PasswordFile (a file of mode 0600 holding the password,
	// a trailing newline ignored) authenticate edged to the brokers.
	Username     string `json:"username,omitempty"`
	PasswordFile string `json:"password_file,omitempty"`
	// TLS configures the ssl:// brokers.
	TLS *MQTTTLS `json:"tls,omitempty"`
	// PrimaryHost, when set, is the Sparkplug host application whose
	// STATE edged waits for before its NBIRTH; while it is offline the
	// data is kept and forwarded later.
	PrimaryHost string `json:"primary_host,omitempty"`
	// MinIntervalMs is the least time between two DDATA of a device,
	// 0..3600000 (0: every scan change goes out in the cycle's DDATA).
	MinIntervalMs int `json:"min_interval_ms,omitempty"`
	// Tags are the tags published; absent: every tag, without deadband.
	Tags []SparkplugTag `json:"tags,omitempty"`
	// Commands, when present, lets DCMD messages write read-write tags
	// with the rights of Role (an OPC UA role: Operator, Engineer,
	// Supervisor); absent: DCMD writes are refused.
	Commands *SparkplugCommands `json:"commands,omitempty"`
	// ReplayRate is how many stored samples a second are forwarded after
	// an outage, 100..1000000 (the tags with a history are forwarded;
	// docs/sparkplug.md).
	ReplayRate int `json:"replay_rate"`
}

// MQTTTLS is the TLS of the broker connections.
type MQTTTLS struct {
	// CAFile is the PEM file of the CA certificates the brokers'
	// certificates are verified against ("": the system's).
	CAFile string `json:"ca_file,omitempty"`
	// CertFile and KeyFile are edged's client certificate and key (PEM;
	// the key file of mode 0600); both or neither.
	CertFile string `json:"cert_file,omitempty"`
	KeyFile  string `json:"key_file,omitempty"`
	// ServerName overrides the name verified in the broker's certificate
	// (the URL's host by default).
	ServerName string `json:"server_name,omitempty"`
}

// SparkplugTag is one published tag.
type SparkplugTag struct {
	Device string `json:"device"`
	Name   string `json:"name"`
	// Deadband, for a number, is the least change (absolute, in the tag's
	// units) that is published; 0: every change.
	Deadband float64 `json:"deadband,omitempty"`
}

// SparkplugCommands enables DCMD writes.
type SparkplugCommands struct {
	Role string `json:"role"`
}

// MaxBrokers bounds Sparkplug.Brokers.
const MaxBrokers = 16

// SparkplugID reports whether s may be a Sparkplug group, edge node or
// device id: not empty, at most 256 bytes, none of '/', '+', '#'.
func SparkplugID(s string) bool {
	return s != "" && len(s) <= 256 && !strings.ContainsAny(s, "/+#")
}

func (v *validator) northbound(c *Config) {
	if c.Northbound == nil || c.Northbound.Sparkplug == nil {
		return
	}
	s := c.Northbound.Sparkplug
	const p = "northbound.sparkplug"
	switch {
	case len(s.Brokers) == 0:
		v.add(p+".brokers", "missing (e.g. [\"tcp://broker:1883\"])")
	case len(s.Brokers) > MaxBrokers:
		v.add(p+".brokers", "%d brokers, more than %d", len(s.Brokers), MaxBrokers)
	}
	for i, b := range s.Brokers {
		bp := fmt.Sprintf("%s.brokers[%d]", p, i)
		u, err := url.Parse(b)
		switch {
		case err != nil:
			v.add(bp, "%q is not a URL", b)
		case u.Scheme != "tcp" && u.Scheme != "mqtt" && u.Scheme != "ssl" && u.Scheme != "tls" && u.Scheme != "mqtts":
			v.add(bp, "%q: the scheme is not tcp, mqtt, ssl, tls or mqtts", b)
		case u.Hostname() == "" || u.Path != "" && u.Path != "/":
			v.add(bp, "%q: want scheme://host[:port]", b)
		}
	}
	if !SparkplugID(s.GroupID) {
		v.add(p+".group_id", "%q: not empty, at most 256 bytes, none of '/', '+', '#'", s.GroupID)
	}
	if s.EdgeNodeID != "" && !SparkplugID(s.EdgeNodeID) {
		v.add(p+".edge_node_id", "%q: at most 256 bytes, none of '/', '+', '#' (or absent: the host name)", s.EdgeNodeID)
	}
	if len(s.ClientID) > 65535 {
		v.add(p+".client_id", "longer than 65,535 bytes")
	}
	v.intRange(p+".keep_alive_s", s.KeepAliveS, 5, 3600, " (the usual value is 30)")
	if s.PasswordFile != "" && s.Username == "" {
		v.add(p+".password_file", "set without a username")
	}
	if t := s.TLS; t != nil && (t.CertFile == "") != (t.KeyFile == "") {
		v.add(p+".tls", "cert_file and key_file go together")
	}
	if s.PrimaryHost != "" && !SparkplugID(s.PrimaryHost) {
		v.add(p+".primary_host", "%q: at most 256 bytes, none of '/', '+', '#'", s.PrimaryHost)
	}
	if s.MinIntervalMs < 0 || s.MinIntervalMs > 3600000 {
		v.add(p+".min_interval_ms", "%d is outside 0..3600000", s.MinIntervalMs)
	}
	v.intRange(p+".replay_rate", s.ReplayRate, 100, 1000000, " (the usual value is 10000 samples a second)")
	if s.Commands != nil && s.Commands.Role == "" {
		v.add(p+".commands.role", "missing (e.g. \"Operator\")")
	}
	seen := map[[2]string]bool{}
	for i, t := range s.Tags {
		tp := fmt.Sprintf("%s.tags[%d]", p, i)
		ct := c.findTag(t.Device, t.Name)
		switch {
		case ct == nil:
			v.add(tp, "%s.%s is not a tag of the configuration", t.Device, t.Name)
		case seen[[2]string{t.Device, t.Name}]:
			v.add(tp, "%s.%s is listed twice", t.Device, t.Name)
		case t.Deadband < 0 || math.IsNaN(t.Deadband) || t.Deadband > MaxScale:
			v.add(tp+".deadband", "%v is outside 0..%g", t.Deadband, MaxScale)
		case t.Deadband > 0 && (ct.Type == Bool || ct.Type == String):
			v.add(tp+".deadband", "a deadband on a %s tag", ct.Type)
		}
		seen[[2]string{t.Device, t.Name}] = true
	}
}

// findTag returns the tag device.name of c, nil if none.
func (c *Config) findTag(device, name string) *Tag {
	for i := range c.Devices {
		if c.Devices[i].Name != device {
			continue
		}
		for j := range c.Devices[i].Tags {
			if c.Devices[i].Tags[j].Name == name {
				return &c.Devices[i].Tags[j]
			}
		}
	}
	return nil
}

// DefaultSparkplug is the northbound of `edged --mqtt URL`: an edge node
// of group "edged" on the one broker, every tag, a 30 s keep-alive,
// forwarding 10,000 stored samples a second, commands off.
func DefaultSparkplug(broker string) *Northbound {
	return &Northbound{Sparkplug: &Sparkplug{Brokers: []string{broker}, GroupID: "edged", KeepAliveS: 30, ReplayRate: 10000}}
}
