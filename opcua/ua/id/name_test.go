package id

import "testing"

func TestName(t *testing.T) {
	for _, tc := range []struct {
		n    uint32
		want string
	}{
		{Boolean, "Boolean"},
		{Server, "Server"},
		{Server_ServerStatus_CurrentTime, "Server_ServerStatus_CurrentTime"},
		{ReadRequest_Encoding_DefaultBinary, "ReadRequest_Encoding_DefaultBinary"},
		{0, ""},
		{1<<32 - 1, ""},
	} {
		if got := Name(tc.n); got != tc.want {
			t.Errorf("Name(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestNameAllocs(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { Name(Server_ServerStatus_CurrentTime) })
	if allocs != 1 {
		t.Errorf("Name allocates %v times, want 1", allocs)
	}
}

func BenchmarkName(b *testing.B) {
	for b.Loop() {
		Name(Server_ServerStatus_CurrentTime)
	}
}
