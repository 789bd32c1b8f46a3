package ua

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/edged/edged/opcua/ua/status"
)

// Limits bound what a Decoder accepts before it allocates. A zero field
// means the default of DefaultLimits.
type Limits struct {
	MaxStringLength     int // bytes of one String or XmlElement
	MaxByteStringLength int // bytes of one ByteString
	MaxArrayLength      int // elements of one array (or all dimensions of a matrix)
	MaxDepth            int // nesting of Variant, DataValue, DiagnosticInfo, ExtensionObject
	// MaxArrayMemory bounds the bytes that arrays newly allocated while
	// decoding one input may take in memory. Some elements take one byte on
	// the wire and a hundred in memory (a null Variant, an empty
	// DataValue), so the input's size alone does not bound them. Zero means
	// 16 times the input's size plus 1 MiB. Arrays decoded into the
	// capacity of a reused value are not counted.
	MaxArrayMemory int64
}

// DefaultLimits are the limits a Decoder applies when its Limits are zero.
// MaxDepth is 100 because OPC 10000-6 §5.2.2.12 wants decoders to accept
// DiagnosticInfos nested at least 100 levels deep.
var DefaultLimits = Limits{
	MaxStringLength:     1 << 20,
	MaxByteStringLength: 16 << 20,
	MaxArrayLength:      1 << 20,
	MaxDepth:            100,
}

// Decoder reads UA Binary values from a byte slice. The zero value decodes
// an empty input with DefaultLimits; Reset gives it bytes.
//
// The first error is kept (see Err); later reads return zero values and do
// not move. Every length read from the input is checked against the bytes
// that remain and against the limits before memory is allocated for it.
type Decoder struct {
	buf []byte
	off int
	err error
	// depth is the current nesting of Variant, DataValue, DiagnosticInfo and
	// ExtensionObject.
	depth int
	// arrayMem is what arrays allocated for this input take, in bytes.
	arrayMem int64

	// Limits applies to every value this Decoder reads.
	Limits Limits
	// Alias makes decoded strings and byte strings point into the input
	// buffer instead of copying them. See the package documentation.
	Alias bool
}

// NewDecoder returns a Decoder reading b with DefaultLimits.
func NewDecoder(b []byte) *Decoder {
	d := &Decoder{}
	d.Reset(b)
	return d
}

// Reset makes d read b from its start and clears the error and depth. The
// Limits and Alias settings stay.
func (d *Decoder) Reset(b []byte) {
	d.buf, d.off, d.err, d.depth, d.arrayMem = b, 0, nil, 0, 0
	if d.Limits.MaxStringLength <= 0 {
		d.Limits.MaxStringLength = DefaultLimits.MaxStringLength
	}
	if d.Limits.MaxByteStringLength <= 0 {
		d.Limits.MaxByteStringLength = DefaultLimits.MaxByteStringLength
	}
	if d.Limits.MaxArrayLength <= 0 {
		d.Limits.MaxArrayLength = DefaultLimits.MaxArrayLength
	}
	if d.Limits.MaxDepth <= 0 {
		d.Limits.MaxDepth = DefaultLimits.MaxDepth
	}
}

// Err returns the first error met, nil if none. It is a StatusCode.
func (d *Decoder) Err() error { return d.err }

// Fail records err as the decoder's error unless one is recorded already.
// Decode methods of composite types call it for semantic violations (an
// unknown encoding mask bit, say).
func (d *Decoder) Fail(err error) {
	if d.err == nil {
		d.err = err
		d.off = len(d.buf)
	}
}

// Offset returns how many bytes have been consumed.
func (d *Decoder) Offset() int { return d.off }

// Remaining returns how many bytes are left.
func (d *Decoder) Remaining() int { return len(d.buf) - d.off }

// Rest returns the unread bytes (aliasing the input).
func (d *Decoder) Rest() []byte { return d.buf[d.off:] }

// Enter accounts one level of nesting of a Variant, DataValue,
// DiagnosticInfo or ExtensionObject. It reports false, with
// status.BadEncodingLimitsExceeded recorded, when the limit is passed; the
// caller then returns without decoding. Each successful Enter is paired
// with a Leave.
func (d *Decoder) Enter() bool {
	if d.err != nil {
		return false
	}
	if d.depth >= d.Limits.MaxDepth {
		d.Fail(status.BadEncodingLimitsExceeded)
		return false
	}
	d.depth++
	return true
}

// Leave ends a level of nesting begun by a successful Enter.
func (d *Decoder) Leave() { d.depth-- }

// next returns the next n bytes, or nil with BadDecodingError recorded.
func (d *Decoder) next(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.buf)-d.off {
		d.Fail(status.BadDecodingError)
		return nil
	}
	p := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return p
}

// ReadBool reads a Boolean; any non-zero byte is true.
func (d *Decoder) ReadBool() bool {
	p := d.next(1)
	return p != nil && p[0] != 0
}

// ReadUint8 reads a Byte.
func (d *Decoder) ReadUint8() byte {
	if p := d.next(1); p != nil {
		return p[0]
	}
	return 0
}

// ReadInt8 reads an SByte.
func (d *Decoder) ReadInt8() int8 { return int8(d.ReadUint8()) }

// ReadUint16 reads a UInt16.
func (d *Decoder) ReadUint16() uint16 {
	if p := d.next(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

// ReadInt16 reads an Int16.
func (d *Decoder) ReadInt16() int16 { return int16(d.ReadUint16()) }

// ReadUint32 reads a UInt32.
func (d *Decoder) ReadUint32() uint32 {
	if p := d.next(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

// ReadInt32 reads an Int32.
func (d *Decoder) ReadInt32() int32 { return int32(d.ReadUint32()) }

// ReadUint64 reads a UInt64.
func (d *Decoder) ReadUint64() uint64 {
	if p := d.next(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// ReadInt64 reads an Int64.
func (d *Decoder) ReadInt64() int64 { return int64(d.ReadUint64()) }

// ReadFloat32 reads a Float.
func (d *Decoder) ReadFloat32() float32 { return math.Float32frombits(d.ReadUint32()) }

// ReadFloat64 reads a Double.
func (d *Decoder) ReadFloat64() float64 { return math.Float64frombits(d.ReadUint64()) }

// ReadBytes reads n raw bytes, aliasing the input. It is for fixed-size
// fields (a Guid's Data4, say); lengths from the wire go through the
// checked readers.
func (d *Decoder) ReadBytes(n int) []byte { return d.next(n) }

// readLen reads an Int32 length prefix and checks it against max and the
// remaining input. It returns -1 for null, or the length; on violation it
// records the error and returns -1.
func (d *Decoder) readLen(max int) int {
	n := d.ReadInt32()
	if d.err != nil || n < 0 {
		// Any negative length is null (OPC 10000-6 §5.2.2.4).
		return -1
	}
	if int64(n) > int64(max) {
		d.Fail(status.BadEncodingLimitsExceeded)
		return -1
	}
	if int64(n) > int64(len(d.buf)-d.off) {
		d.Fail(status.BadDecodingError)
		return -1
	}
	return int(n)
}

// ReadString reads a String. A null string gives "".
func (d *Decoder) ReadString() string { return d.ReadStringReuse("") }

// ReadStringReuse reads a String and returns prev, without allocating,
// when prev holds the same text. Decode methods pass the field's current
// value, so decoding the same message into the same value again does not
// allocate. With Alias set the result points into the input instead.
func (d *Decoder) ReadStringReuse(prev string) string {
	n := d.readLen(d.Limits.MaxStringLength)
	if n <= 0 {
		return ""
	}
	p := d.next(n)
	if d.Alias {
		return unsafe.String(&p[0], n)
	}
	if string(p) == prev { // the comparison does not allocate
		return prev
	}
	return string(p)
}

// ReadByteString reads a ByteString. A null ByteString gives nil, an empty
// one a non-nil empty slice. Without Alias the bytes are copied into dst's
// capacity (dst is reused from its start, as dst[:0]); with Alias the
// result points into the input.
func (d *Decoder) ReadByteString(dst []byte) []byte {
	n := d.readLen(d.Limits.MaxByteStringLength)
	if n < 0 {
		return nil
	}
	p := d.next(n)
	if d.err != nil {
		return nil
	}
	if d.Alias {
		return p
	}
	if dst == nil {
		dst = make([]byte, 0, n)
	}
	return append(dst[:0], p...)
}

// ReadArrayLen reads the Int32 length that precedes an array and checks it:
// against Limits.MaxArrayLength, and against the remaining input given that
// every element takes at least minElemSize bytes (minElemSize ≥ 1). It
// returns the length, 0 for a null array, or 0 with the error recorded.
func (d *Decoder) ReadArrayLen(minElemSize int) int {
	n := d.ReadInt32()
	if d.err != nil || n <= 0 {
		return 0
	}
	return d.CheckArrayLen(int64(n), minElemSize)
}

// ReadArrayLenNull is ReadArrayLen that tells a null array from an empty
// one: a negative length gives 0, true. Decode methods decode a null
// array as nil and an empty one as an empty non-nil slice (a zero-length
// slice costs no allocation), so that a value decodes the same whether it
// is new or reused, and re-encodes as it came.
func (d *Decoder) ReadArrayLenNull(minElemSize int) (n int, null bool) {
	l := d.ReadInt32()
	if d.err != nil {
		return 0, false
	}
	if l < 0 {
		return 0, true
	}
	return d.CheckArrayLen(int64(l), minElemSize), false
}

// CheckArrayLen checks an element count n that came from the input (an
// array length, or the product of ArrayDimensions) as ReadArrayLen does and
// returns it as an int, or 0 with the error recorded.
func (d *Decoder) CheckArrayLen(n int64, minElemSize int) int {
	if d.err != nil || n <= 0 {
		return 0
	}
	if n > int64(d.Limits.MaxArrayLength) {
		d.Fail(status.BadEncodingLimitsExceeded)
		return 0
	}
	if minElemSize < 1 {
		minElemSize = 1
	}
	if n > int64(len(d.buf)-d.off)/int64(minElemSize) {
		d.Fail(status.BadDecodingError)
		return 0
	}
	return int(n)
}

// Grow returns s resized to n elements, reusing its capacity when it is
// large enough. Elements kept from earlier use are not cleared: Decode
// methods overwrite every field.
func Grow[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	return make([]T, n)
}

// ReadArray reads an array's length prefix (see ReadArrayLenNull) and
// returns s resized for the elements that follow: nil for a null array, a
// non-nil slice of that length otherwise, reusing s's capacity when it is
// large enough. A value so decodes the same whether it is new or reused,
// and re-encodes as it came. Elements kept from earlier use are not
// cleared: the caller decodes every element.
func ReadArray[T any](d *Decoder, s []T, minElemSize int) []T {
	n, null := d.ReadArrayLenNull(minElemSize)
	if null || d.err != nil {
		return nil
	}
	return GrowArray(d, s, n)
}

// GrowArray returns s resized to n elements for decoding, as a non-nil
// slice, reusing its capacity when it is large enough. A new allocation is
// charged to Limits.MaxArrayMemory; past it, GrowArray records
// status.BadEncodingLimitsExceeded and returns an empty slice.
func GrowArray[T any](d *Decoder, s []T, n int) []T {
	if n <= cap(s) {
		if s == nil {
			return []T{}
		}
		return s[:n]
	}
	var zero T
	size := int64(n) * int64(unsafe.Sizeof(zero))
	budget := d.Limits.MaxArrayMemory
	if budget <= 0 {
		budget = 16*int64(len(d.buf)) + 1<<20
	}
	if size > budget-d.arrayMem {
		d.Fail(status.BadEncodingLimitsExceeded)
		return s[:0]
	}
	d.arrayMem += size
	return make([]T, n)
}
