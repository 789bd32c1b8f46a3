package config

import (
	"strings"
	"testing"
)

func withSparkplug(f func(s *Sparkplug)) func(c *Config) {
	return func(c *Config) {
		c.Northbound = DefaultSparkplug("tcp://broker:1883")
		f(c.Northbound.Sparkplug)
	}
}

func TestNorthboundProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(c *Config)
		want string // "" means valid
	}{
		{"defaults", withSparkplug(func(s *Sparkplug) {}), ""},
		{"full", withSparkplug(func(s *Sparkplug) {
			s.Brokers = []string{"ssl://a:8883", "ssl://b:8883"}
			s.EdgeNodeID, s.Username, s.PasswordFile, s.PrimaryHost = "gw-7", "edge", "/etc/edged/mqtt.pw", "scada"
			s.TLS = &MQTTTLS{CAFile: "ca.pem", CertFile: "c.pem", KeyFile: "c.key"}
			s.MinIntervalMs = 100
			s.Commands = &SparkplugCommands{Role: "Operator"}
			s.Tags = []SparkplugTag{{Device: "plc1", Name: "Temp", Deadband: 0.5}}
		}), ""},
		{"no brokers", withSparkplug(func(s *Sparkplug) { s.Brokers = nil }), "northbound.sparkplug.brokers: missing"},
		{"broker scheme", withSparkplug(func(s *Sparkplug) { s.Brokers = []string{"http://a"} }), "northbound.sparkplug.brokers[0]: \"http://a\": the scheme"},
		{"broker path", withSparkplug(func(s *Sparkplug) { s.Brokers = []string{"tcp://a/x"} }), "northbound.sparkplug.brokers[0]: \"tcp://a/x\": want scheme://host[:port]"},
		{"group", withSparkplug(func(s *Sparkplug) { s.GroupID = "a/b" }), "northbound.sparkplug.group_id: \"a/b\""},
		{"group missing", withSparkplug(func(s *Sparkplug) { s.GroupID = "" }), "northbound.sparkplug.group_id: \"\""},
		{"node", withSparkplug(func(s *Sparkplug) { s.EdgeNodeID = "n#" }), "northbound.sparkplug.edge_node_id"},
		{"keep-alive", withSparkplug(func(s *Sparkplug) { s.KeepAliveS = 1 }), "northbound.sparkplug.keep_alive_s: 1 is outside 5..3600"},
		{"keep-alive missing", withSparkplug(func(s *Sparkplug) { s.KeepAliveS = 0 }), "northbound.sparkplug.keep_alive_s: missing"},
		{"password without user", withSparkplug(func(s *Sparkplug) { s.PasswordFile = "p" }), "northbound.sparkplug.password_file: set without a username"},
		{"half a key pair", withSparkplug(func(s *Sparkplug) { s.TLS = &MQTTTLS{CertFile: "c.pem"} }), "northbound.sparkplug.tls: cert_file and key_file go together"},
		{"primary host", withSparkplug(func(s *Sparkplug) { s.PrimaryHost = "a+b" }), "northbound.sparkplug.primary_host"},
		{"interval", withSparkplug(func(s *Sparkplug) { s.MinIntervalMs = -1 }), "northbound.sparkplug.min_interval_ms: -1 is outside"},
		{"replay rate", withSparkplug(func(s *Sparkplug) { s.ReplayRate = 10 }), "northbound.sparkplug.replay_rate: 10 is outside 100..1000000"},
		{"role missing", withSparkplug(func(s *Sparkplug) { s.Commands = &SparkplugCommands{} }), "northbound.sparkplug.commands.role: missing"},
		{"unknown tag", withSparkplug(func(s *Sparkplug) { s.Tags = []SparkplugTag{{Device: "plc1", Name: "Nope"}} }),
			"northbound.sparkplug.tags[0]: plc1.Nope is not a tag of the configuration"},
		{"tag twice", withSparkplug(func(s *Sparkplug) {
			s.Tags = []SparkplugTag{{Device: "plc1", Name: "Temp"}, {Device: "plc1", Name: "Temp"}}
		}), "northbound.sparkplug.tags[1]: plc1.Temp is listed twice"},
		{"negative deadband", withSparkplug(func(s *Sparkplug) { s.Tags = []SparkplugTag{{Device: "plc1", Name: "Temp", Deadband: -1}} }),
			"northbound.sparkplug.tags[0].deadband: -1 is outside"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkProblems(t, tc.f, tc.want) })
	}
}

// A deadband on a Boolean is refused.
func TestNorthboundDeadbandOnBool(t *testing.T) {
	c := Simulator()
	c.Northbound = DefaultSparkplug("tcp://b")
	c.Northbound.Sparkplug.Tags = []SparkplugTag{{Device: "sim", Name: "Toggle", Deadband: 1}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "northbound.sparkplug.tags[0].deadband: a deadband on a bool tag") {
		t.Fatalf("%v", err)
	}
}
