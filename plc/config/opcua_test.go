package config

import (
	"fmt"
	"testing"
)

func withReverse(rc ...ReverseConnect) func(c *Config) {
	return func(c *Config) { c.OPCUA = &OPCUA{ReverseConnect: rc} }
}

func TestReverseConnectProblems(t *testing.T) {
	many := make([]ReverseConnect, MaxReverseTargets+1)
	for i := range many {
		many[i].URL = fmt.Sprintf("opc.tcp://scada:%d", 4000+i)
	}
	for _, tc := range []struct {
		name string
		f    func(c *Config)
		want string // "" means valid
	}{
		{"none", withReverse(), ""},
		{"two", withReverse(ReverseConnect{URL: "opc.tcp://scada:4844"}, ReverseConnect{URL: "opc.tcp://10.0.0.5:4845", MaxConnections: 8}), ""},
		{"url missing", withReverse(ReverseConnect{}), "opcua.reverse_connect[0].url: missing"},
		{"scheme", withReverse(ReverseConnect{URL: "tcp://scada:4844"}), "opcua.reverse_connect[0].url: \"tcp://scada:4844\": the scheme is not opc.tcp"},
		{"no port", withReverse(ReverseConnect{URL: "opc.tcp://scada"}), "opcua.reverse_connect[0].url: \"opc.tcp://scada\": want opc.tcp://host:port"},
		{"path", withReverse(ReverseConnect{URL: "opc.tcp://scada:4844/x"}), "want opc.tcp://host:port"},
		{"twice", withReverse(ReverseConnect{URL: "opc.tcp://scada:4844"}, ReverseConnect{URL: "opc.tcp://scada:4844"}),
			"opcua.reverse_connect[1].url: \"opc.tcp://scada:4844\" is also opcua.reverse_connect[0]"},
		{"connections", withReverse(ReverseConnect{URL: "opc.tcp://scada:4844", MaxConnections: 65}), "opcua.reverse_connect[0].max_connections: 65 is outside 1..64"},
		{"negative", withReverse(ReverseConnect{URL: "opc.tcp://scada:4844", MaxConnections: -1}), "opcua.reverse_connect[0].max_connections: -1 is outside"},
		{"too many", withReverse(many...), "opcua.reverse_connect: 33 clients, more than 32"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkProblems(t, tc.f, tc.want) })
	}
}
