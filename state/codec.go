package state

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrCorrupt marks bytes a codec or reader cannot make sense of.
var ErrCorrupt = errors.New("state: corrupt bytes")

// Codec turns values of one Go type into bytes and back, and names the type
// so that a savepoint records it. Encodings of the built-in scalar codecs
// sort like their values, so byte order is value order in every backend.
type Codec[T any] interface {
	// TypeName is the name stored in StateMeta; LookupDisplay resolves it.
	TypeName() string
	// Append appends the encoding of v to dst.
	Append(dst []byte, v T) []byte
	// Decode decodes one whole encoding.
	Decode(b []byte) (T, error)
}

// AnyCodec is a Codec with its type erased, as backends hold them.
type AnyCodec interface {
	TypeName() string
	// AppendAny appends the encoding of v, which holds the codec's Go type.
	AppendAny(dst []byte, v any) []byte
	// DecodeAny decodes bytes into the codec's Go type, boxed.
	DecodeAny(b []byte) (any, error)
	// Display decodes bytes into a dynamic value (see Display).
	Display(b []byte) (any, error)
}

// Erase wraps a typed codec for a backend.
func Erase[T any](c Codec[T]) AnyCodec { return erased[T]{c} }

// GoType is the Go type of the values c encodes, when c was made by Erase
// (nil otherwise): what a typed reader of state checks its type against.
func GoType(c AnyCodec) reflect.Type {
	if t, ok := c.(interface{ goType() reflect.Type }); ok {
		return t.goType()
	}
	return nil
}

func (e erased[T]) goType() reflect.Type { return reflect.TypeFor[T]() }

// AppendInt64 appends the encoding of n by c, whose Go type is int64 (GoType),
// without boxing n when Erase made c.
func AppendInt64(c AnyCodec, dst []byte, n int64) []byte {
	if e, ok := c.(erased[int64]); ok {
		return e.c.Append(dst, n)
	}
	return c.AppendAny(dst, BoxInt64(n))
}

// DecodeInt64 decodes b by c, whose Go type is int64 (GoType), without
// boxing the value when Erase made c.
func DecodeInt64(c AnyCodec, b []byte) (int64, error) {
	if e, ok := c.(erased[int64]); ok {
		return e.c.Decode(b)
	}
	v, err := c.DecodeAny(b)
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("state: codec %s decoded a %T, want int64", c.TypeName(), v)
	}
	return n, nil
}

type erased[T any] struct{ c Codec[T] }

func (e erased[T]) TypeName() string                   { return e.c.TypeName() }
func (e erased[T]) AppendAny(dst []byte, v any) []byte { return e.c.Append(dst, v.(T)) }
func (e erased[T]) DecodeAny(b []byte) (any, error) {
	v, err := e.c.Decode(b)
	if err != nil {
		return nil, err
	}
	return box(v), nil // without an allocation for small int64s
}
func (e erased[T]) Display(b []byte) (any, error) {
	if d, ok := e.c.(interface{ Display([]byte) (any, error) }); ok {
		return d.Display(b)
	}
	if d, ok := LookupDisplay(e.c.TypeName()); ok {
		return d(b)
	}
	return e.decodeDisplay(b)
}

// decodeDisplay displays by decoding, without consulting the registry: the
// registry holds it for the built-in codecs, so Display must not recurse.
func (e erased[T]) decodeDisplay(b []byte) (any, error) {
	if d, ok := e.c.(interface{ Display([]byte) (any, error) }); ok {
		return d.Display(b)
	}
	v, err := e.c.Decode(b)
	if err != nil {
		return nil, err
	}
	return ToDynamic(v), nil
}

// Dynamic values are what views and queries see of state, whatever the Go
// types of the job: nil, bool, int64, float64, string, []byte, time.Time,
// []any and map[string]any (JSON objects), and Hex for bytes no codec could
// read.
//
// Hex is bytes shown as hex because their type is unknown.
type Hex []byte

func (h Hex) String() string { return fmt.Sprintf("0x%x", []byte(h)) }

// DisplayFunc decodes bytes of one type name into a dynamic value. The
// value must not share memory with the bytes: readers reuse their buffers.
type DisplayFunc func([]byte) (any, error)

// displays maps type names to their display. Registration copies the map
// (it is rare: at init and when jobs declare codecs); lookups, once per row
// of every scan, read it without locking.
var (
	displaysMu sync.Mutex
	displays   atomic.Pointer[map[string]DisplayFunc]
)

// RegisterDisplay makes a type name readable without the job's code. The
// built-in codecs register themselves; "json:*" names are always readable.
func RegisterDisplay(typeName string, f DisplayFunc) {
	displaysMu.Lock()
	defer displaysMu.Unlock()
	m := map[string]DisplayFunc{}
	if old := displays.Load(); old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[typeName] = f
	displays.Store(&m)
}

// LookupDisplay finds how to display a type name stored in a savepoint.
func LookupDisplay(typeName string) (DisplayFunc, bool) {
	if strings.HasPrefix(typeName, "json:") {
		return DisplayJSON, true
	}
	m := displays.Load()
	if m == nil {
		return nil, false
	}
	f, ok := (*m)[typeName]
	return f, ok
}

// DisplayBytes decodes b with the display of typeName, or shows it as Hex
// when the type is unknown.
func DisplayBytes(typeName string, b []byte) (any, error) {
	if f, ok := LookupDisplay(typeName); ok {
		return f(b)
	}
	return Hex(b), nil
}

func init() {
	for _, c := range []AnyCodec{Erase[string](String), Erase[int64](Int64), Erase[float64](Float64),
		Erase[bool](Bool), Erase[[]byte](Bytes), Erase[time.Time](Time), Erase[Void](VoidCodec),
		Erase[Window](WindowCodec), Erase[int64](Position)} {
		RegisterDisplay(c.TypeName(), c.(interface{ decodeDisplay([]byte) (any, error) }).decodeDisplay)
	}
}

// String encodes a string as its UTF-8 bytes.
var String Codec[string] = stringCodec{}

type stringCodec struct{}

func (stringCodec) TypeName() string                   { return "string" }
func (stringCodec) Append(dst []byte, v string) []byte { return append(dst, v...) }
func (stringCodec) Decode(b []byte) (string, error)    { return string(b), nil }

// Int64 encodes big-endian with the sign bit flipped, so bytes sort as numbers.
var Int64 Codec[int64] = int64Codec{}

type int64Codec struct{}

func (int64Codec) TypeName() string { return "int64" }
func (int64Codec) Append(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}
func (int64Codec) Decode(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("int64: %d bytes, want 8: %w", len(b), ErrCorrupt)
	}
	return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)), nil
}

// Position is an int64 that names a list element's position (the user key
// of list entries). It encodes like Int64.
var Position Codec[int64] = positionCodec{}

type positionCodec struct{ int64Codec }

func (positionCodec) TypeName() string { return "position" }

// Float64 encodes so that bytes sort as numbers (negative values inverted).
var Float64 Codec[float64] = float64Codec{}

type float64Codec struct{}

func (float64Codec) TypeName() string { return "float64" }
func (float64Codec) Append(dst []byte, v float64) []byte {
	u := math.Float64bits(v)
	if u&(1<<63) != 0 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(dst, u)
}
func (float64Codec) Decode(b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("float64: %d bytes, want 8: %w", len(b), ErrCorrupt)
	}
	u := binary.BigEndian.Uint64(b)
	if u&(1<<63) != 0 {
		u &^= 1 << 63
	} else {
		u = ^u
	}
	return math.Float64frombits(u), nil
}

// Bool encodes as one byte, 0 or 1.
var Bool Codec[bool] = boolCodec{}

type boolCodec struct{}

func (boolCodec) TypeName() string { return "bool" }
func (boolCodec) Append(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}
func (boolCodec) Decode(b []byte) (bool, error) {
	if len(b) != 1 || b[0] > 1 {
		return false, fmt.Errorf("bool: %d bytes: %w", len(b), ErrCorrupt)
	}
	return b[0] == 1, nil
}

// Bytes stores bytes as they are.
var Bytes Codec[[]byte] = bytesCodec{}

type bytesCodec struct{}

func (bytesCodec) TypeName() string                   { return "bytes" }
func (bytesCodec) Append(dst []byte, v []byte) []byte { return append(dst, v...) }
func (bytesCodec) Decode(b []byte) ([]byte, error)    { return bytes.Clone(b), nil }

// Time encodes a time as Int64 Unix nanoseconds (UTC).
var Time Codec[time.Time] = timeCodec{}

type timeCodec struct{}

func (timeCodec) TypeName() string { return "time" }
func (timeCodec) Append(dst []byte, v time.Time) []byte {
	return Int64.Append(dst, v.UnixNano())
}
func (timeCodec) Decode(b []byte) (time.Time, error) {
	n, err := Int64.Decode(b)
	if err != nil {
		return time.Time{}, fmt.Errorf("time: %w", err)
	}
	return time.Unix(0, n).UTC(), nil
}

// Void is the namespace of state that is not in a window: it encodes to no
// bytes at all.
type Void struct{}

// VoidCodec encodes the void namespace.
var VoidCodec Codec[Void] = voidCodec{}

type voidCodec struct{}

func (voidCodec) TypeName() string                 { return "void" }
func (voidCodec) Append(dst []byte, _ Void) []byte { return dst }
func (voidCodec) Decode(b []byte) (Void, error) {
	if len(b) != 0 {
		return Void{}, fmt.Errorf("void: %d bytes: %w", len(b), ErrCorrupt)
	}
	return Void{}, nil
}
func (voidCodec) Display([]byte) (any, error) { return nil, nil }

// Window is a time window [Start, End) in epoch milliseconds, the namespace
// of window state (Flink's TimeWindow). The global window is {MinInt64, MaxInt64}.
type Window struct {
	Start, End int64
}

// MaxTimestamp is the last millisecond that belongs to the window. The
// global window's is MaxInt64, as Flink's GlobalWindow.maxTimestamp: a
// timer at it fires with the final watermark, not a millisecond before.
func (w Window) MaxTimestamp() int64 {
	if w.Start == math.MinInt64 && w.End == math.MaxInt64 {
		return math.MaxInt64
	}
	return w.End - 1
}

// Intersects is Flink's TimeWindow.intersects: windows that touch merge.
func (w Window) Intersects(o Window) bool { return w.Start <= o.End && w.End >= o.Start }

// Cover is the smallest window that contains both.
func (w Window) Cover(o Window) Window {
	return Window{Start: min(w.Start, o.Start), End: max(w.End, o.End)}
}

func (w Window) String() string {
	return fmt.Sprintf("[%s, %s)", FormatMillis(w.Start), FormatMillis(w.End))
}

// WindowCodec encodes a window as two Int64s.
var WindowCodec Codec[Window] = windowCodec{}

type windowCodec struct{}

func (windowCodec) TypeName() string { return "window" }
func (windowCodec) Append(dst []byte, w Window) []byte {
	return Int64.Append(Int64.Append(dst, w.Start), w.End)
}
func (windowCodec) Decode(b []byte) (Window, error) {
	if len(b) != 16 {
		return Window{}, fmt.Errorf("window: %d bytes, want 16: %w", len(b), ErrCorrupt)
	}
	s, _ := Int64.Decode(b[:8])
	e, _ := Int64.Decode(b[8:])
	return Window{s, e}, nil
}
func (c windowCodec) Display(b []byte) (any, error) {
	w, err := c.Decode(b)
	if err != nil {
		return nil, err
	}
	return map[string]any{"start": MillisValue(w.Start), "end": MillisValue(w.End)}, nil
}

// MillisValue is the dynamic value of an epoch-millisecond timestamp: a time,
// or the int64 itself at the ends of time.
func MillisValue(ms int64) any {
	if ms == math.MinInt64 || ms == math.MaxInt64 {
		return ms
	}
	return time.UnixMilli(ms).UTC()
}

// FormatMillis prints epoch milliseconds as RFC 3339 with milliseconds, or
// as a Sentinel outside the years 0000–9999.
func FormatMillis(ms int64) string {
	if s, ok := Sentinel(ms); ok {
		return s
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// Sentinel names a time outside the years 0000–9999, which RFC 3339 cannot
// write: Flink's sentinels near the ends of a long (a timer at
// Long.MIN_VALUE+10) by their distance to that end (-∞, Long.MIN_VALUE+10,
// +∞, Long.MAX_VALUE-1), anything else by its epoch milliseconds
// ("-62167219200001 ms"). ok is false for times in those years.
func Sentinel(ms int64) (s string, ok bool) {
	const minDate, maxDate = -62167219200000, 253402300799999 // 0000-01-01T00:00:00.000Z, 9999-12-31T23:59:59.999Z
	switch {
	case ms == math.MinInt64:
		return "-∞", true
	case ms == math.MaxInt64:
		return "+∞", true
	case ms < minDate && ms-math.MinInt64 < 1<<40:
		return fmt.Sprintf("Long.MIN_VALUE+%d", uint64(ms-math.MinInt64)), true
	case ms > maxDate && math.MaxInt64-ms < 1<<40:
		return fmt.Sprintf("Long.MAX_VALUE-%d", uint64(math.MaxInt64-ms)), true
	case ms < minDate || ms > maxDate:
		return fmt.Sprintf("%d ms", ms), true
	}
	return "", false
}

// JSON encodes values of any Go type as JSON, so a savepoint stays readable
// without the job's types. The type name is "json:" and the Go type's name.
func JSON[T any]() Codec[T] {
	var zero T
	name := reflect.TypeOf(&zero).Elem().String()
	return jsonCodec[T]{name: "json:" + name}
}

type jsonCodec[T any] struct{ name string }

func (c jsonCodec[T]) TypeName() string { return c.name }
func (c jsonCodec[T]) Append(dst []byte, v T) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// INVARIANT: values reaching a codec came from the job's own Go
		// types; a type json cannot marshal is a programming error that
		// shows up the first time the state is written.
		panic(fmt.Sprintf("state: json codec %s: %v", c.name, err))
	}
	return append(dst, b...)
}
func (c jsonCodec[T]) Decode(b []byte) (T, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("%s: %v: %w", c.name, err, ErrCorrupt)
	}
	return v, nil
}
func (c jsonCodec[T]) Display(b []byte) (any, error) { return DisplayJSON(b) }

// DisplayJSON decodes JSON into dynamic values: integers become int64, other
// numbers float64.
func DisplayJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("json: %v: %w", err, ErrCorrupt)
	}
	return normalizeJSON(v), nil
}

func normalizeJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = normalizeJSON(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalizeJSON(x[k])
		}
	}
	return v
}

// ToDynamic converts a Go value into a dynamic value (see Hex).
func ToDynamic(v any) any {
	switch x := v.(type) {
	case nil, bool, int64, float64, string, []byte, time.Time, Hex:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	case float32:
		return float64(x)
	case Void:
		return nil
	case Window:
		return map[string]any{"start": MillisValue(x.Start), "end": MillisValue(x.End)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	d, err := DisplayJSON(b)
	if err != nil {
		return fmt.Sprint(v)
	}
	return d
}
