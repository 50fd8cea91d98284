package runtime

import (
	"fmt"
	"reflect"
	"time"

	"streamdbg/state"
)

// KeyCodec is the codec KeyBy infers for keys of type K: the built-in
// codecs for string, int64, float64, bool, []byte and time.Time; int,
// int32 and the named types of a string or integer kind encode as string
// or int64 and carry that type name, so savepoints and queries read them
// without the job's types (key = 'u1', key = 42); every other type is
// JSON (state.JSON), deterministic for structs, whose fields keep their
// order.
func KeyCodec[K any]() state.Codec[K] {
	var c any
	switch reflect.TypeFor[K]() {
	case reflect.TypeFor[string]():
		c = state.String
	case reflect.TypeFor[int64]():
		c = state.Int64
	case reflect.TypeFor[float64]():
		c = state.Float64
	case reflect.TypeFor[bool]():
		c = state.Bool
	case reflect.TypeFor[[]byte]():
		c = state.Bytes
	case reflect.TypeFor[time.Time]():
		c = state.Time
	}
	if c != nil {
		return c.(state.Codec[K]) // INVARIANT: the case matched K exactly
	}
	switch reflect.TypeFor[K]().Kind() {
	case reflect.String:
		return kindCodec[K]{name: state.String.TypeName()}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindCodec[K]{name: state.Int64.TypeName()}
	}
	return state.JSON[K]()
}

// kindCodec encodes a type of string or signed integer kind as the
// built-in codec of that kind does.
type kindCodec[K any] struct{ name string }

func (c kindCodec[K]) TypeName() string { return c.name }

func (c kindCodec[K]) Append(dst []byte, k K) []byte {
	v := reflect.ValueOf(&k).Elem()
	if v.Kind() == reflect.String {
		return state.String.Append(dst, v.String())
	}
	return state.Int64.Append(dst, v.Int())
}

func (c kindCodec[K]) Decode(b []byte) (K, error) {
	var k K
	v := reflect.ValueOf(&k).Elem()
	if v.Kind() == reflect.String {
		v.SetString(string(b))
		return k, nil
	}
	n, err := state.Int64.Decode(b)
	if err != nil {
		return k, err
	}
	if v.OverflowInt(n) {
		return k, fmt.Errorf("%s: %d does not fit: %w", v.Type(), n, state.ErrCorrupt)
	}
	v.SetInt(n)
	return k, nil
}
