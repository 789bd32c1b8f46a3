package uasc

import (
	"encoding/binary"

	"github.com/edged/edged/opcua/ua/status"
)

// Secure conversation chunks (OPC 10000-6 §6.7.2). After the 8-byte
// message header:
//
//	SecureChannelId  UInt32
//	security header  OPN: asymmetric (SecurityPolicyUri String,
//	                      SenderCertificate ByteString,
//	                      ReceiverCertificateThumbprint ByteString)
//	                 MSG, CLO: symmetric (TokenId UInt32)
//	sequence header  SequenceNumber UInt32, RequestId UInt32   ┐ signed,
//	body             part of the message                        │ encrypted
//	padding          when encrypting: PaddingSize+1 bytes of    │ when the
//	                 PaddingSize [, ExtraPaddingSize]           │ policy
//	signature        when signing                               ┘ says so
const (
	chanHdrLen = hdrLen + 4     // header and SecureChannelId
	symHdrLen  = chanHdrLen + 4 // and TokenId
	seqHdrLen  = 8              // SequenceNumber, RequestId

	// maxPolicyURILength bounds the SecurityPolicyUri of an OPN chunk.
	maxPolicyURILength = 256

	// maxOPNChunks and maxOPNRequest bound an OpenSecureChannel request
	// in several chunks; a whole one (nonce, request header) is well
	// under 1 KiB.
	maxOPNChunks  = 16
	maxOPNRequest = 16 << 10

	// lastSeqBeforeWrap: a sequence number may wrap to a value below
	// 1024 only after it passed this value (OPC 10000-6 §6.7.2.4,
	// UInt32.MaxValue − 1024).
	lastSeqBeforeWrap = 4294966271
)

// maxBodySize returns how many body bytes fit a chunk of chunkSize bytes
// whose security header ends at secHdr, under cr (OPC 10000-6 §6.7.2.5):
// without encryption the chunk minus headers and signature; with it, the
// plaintext of as many cipher blocks as fit, minus the sequence header,
// signature and the padding size byte(s). It is ≤ 0 when nothing fits.
func maxBodySize(chunkSize, secHdr int, cr ChunkCrypto) int {
	sig := cr.SignatureSize()
	pb, cb := cr.EncryptBlockSizes()
	if pb <= 0 {
		return chunkSize - secHdr - seqHdrLen - sig
	}
	padBytes := 1
	if extra, _ := cr.ExtraPadding(); extra {
		padBytes = 2
	}
	return pb*((chunkSize-secHdr)/cb) - seqHdrLen - sig - padBytes
}

// sealChunk finishes the chunk that starts at b[start:]: its security
// header ends at start+secHdr and its plaintext (sequence header and body)
// runs to len(b). It appends the padding (when encrypting), patches
// MessageSize, appends the signature over header and plaintext, and
// encrypts from the sequence header on. scratch is a reused buffer.
// Under SecurityPolicy None it only patches MessageSize.
func sealChunk(b []byte, start, secHdr int, cr ChunkCrypto, scratch *[]byte) ([]byte, error) {
	if a, ok := cr.(AEADCrypto); ok {
		return a.SealChunk(b, start)
	}
	plainStart := start + secHdr
	sig := cr.SignatureSize()
	pb, cb := cr.EncryptBlockSizes()
	size := len(b) - start + sig
	if pb > 0 {
		extra, _ := cr.ExtraPadding()
		n := len(b) - plainStart + sig + 1
		if extra {
			n++
		}
		pad := (pb - n%pb) % pb
		for i := 0; i <= pad; i++ {
			b = append(b, byte(pad))
		}
		if extra {
			b = append(b, byte(pad>>8))
		}
		size = secHdr + (len(b)-plainStart+sig)/pb*cb
	}
	binary.LittleEndian.PutUint32(b[start+4:], uint32(size))
	var err error
	if sig > 0 {
		if b, err = cr.Sign(b, b[start:]); err != nil {
			return b, err
		}
	}
	if pb > 0 {
		*scratch = append((*scratch)[:0], b[plainStart:]...)
		b, err = cr.Encrypt(b[:plainStart], *scratch)
	}
	return b, err
}

// openChunk undoes sealChunk on a received chunk whose security header
// ends at secHdr: it decrypts in place, verifies the signature, checks and
// strips the padding, and returns the plaintext (sequence header and
// body), which aliases chunk. A failure is Bad_SecurityChecksFailed.
// Under SecurityPolicy None it returns chunk[secHdr:].
func openChunk(chunk []byte, secHdr int, cr ChunkCrypto, prevSeq uint32) ([]byte, error) {
	if a, ok := cr.(AEADCrypto); ok {
		p, err := a.OpenChunk(chunk, prevSeq)
		if err != nil {
			return nil, status.BadSecurityChecksFailed
		}
		return p, nil
	}
	pb, cb := cr.DecryptBlockSizes()
	end := len(chunk)
	if pb > 0 {
		if cb <= 0 || (end-secHdr)%cb != 0 {
			return nil, status.BadSecurityChecksFailed
		}
		p, err := cr.Decrypt(chunk[secHdr:])
		if err != nil {
			return nil, status.BadSecurityChecksFailed
		}
		end = secHdr + len(p)
	}
	sig := cr.RemoteSignatureSize()
	if end-secHdr < seqHdrLen+sig {
		return nil, status.BadSecurityChecksFailed
	}
	if sig > 0 {
		if err := cr.Verify(chunk[:end-sig], chunk[end-sig:end]); err != nil {
			return nil, status.BadSecurityChecksFailed
		}
		end -= sig
	}
	plain := chunk[secHdr:end]
	if pb > 0 {
		_, extra := cr.ExtraPadding()
		n := len(plain)
		pad, padBytes := int(plain[n-1]), 1
		if extra {
			pad, padBytes = int(plain[n-1])<<8|int(plain[n-2]), 2
		}
		if n < seqHdrLen+pad+padBytes {
			return nil, status.BadSecurityChecksFailed
		}
		for _, v := range plain[n-padBytes-pad : n-padBytes] {
			if v != byte(pad) {
				return nil, status.BadSecurityChecksFailed
			}
		}
		plain = plain[:n-padBytes-pad]
	}
	return plain, nil
}
