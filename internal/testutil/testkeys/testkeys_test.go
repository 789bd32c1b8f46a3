package testkeys

import "testing"

func TestRSA(t *testing.T) {
	for _, bits := range []int{2048, 3072, 4096} {
		k := RSA(bits)
		if k.N.BitLen() != bits || k.Validate() != nil {
			t.Fatalf("key of %d bits: %d bits, %v", bits, k.N.BitLen(), k.Validate())
		}
		if RSA(bits) != k {
			t.Fatal("not the same key twice")
		}
	}
}
