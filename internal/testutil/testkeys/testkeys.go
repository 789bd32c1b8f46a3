// Package testkeys hands tests fixed RSA keys of 2048, 3072 and 4096 bits
// (testdata/, made once with openssl genpkey), so that tests under
// emulation do not spend minutes generating keys. They protect nothing.
package testkeys

import (
	"crypto/rsa"
	"crypto/x509"
	"embed"
	"encoding/pem"
	"fmt"
	"sync"
)

//go:embed testdata/*.pem
var files embed.FS

var (
	mu   sync.Mutex
	keys = map[int]*rsa.PrivateKey{}
)

// RSA returns the fixed key of bits (2048, 3072 or 4096); it panics for
// other sizes.
func RSA(bits int) *rsa.PrivateKey {
	mu.Lock()
	defer mu.Unlock()
	if k := keys[bits]; k != nil {
		return k
	}
	b, err := files.ReadFile(fmt.Sprintf("testdata/rsa%d.pem", bits))
	if err != nil {
		panic("testkeys: no key of " + fmt.Sprint(bits) + " bits")
	}
	blk, _ := pem.Decode(b)
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		panic(err)
	}
	key := k.(*rsa.PrivateKey)
	keys[bits] = key
	return key
}
