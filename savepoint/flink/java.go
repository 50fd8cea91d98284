package flink

import (
	"errors"

	"streamdbg/state"
)

// Java serialization stream constants (java.io.ObjectStreamConstants).
const (
	javaStreamMagic   = 0xaced
	javaTCString      = 0x74
	javaTCLongString  = 0x7c
	javaTCObject      = 0x73
	javaTCClassDesc   = 0x72
	javaStreamVersion = 5
)

// decodeJavaSerialized reads a value of Flink's JavaSerializer: a raw Java
// serialization stream with no length of its own. A java.lang.String is
// recovered; anything else takes the rest of d (callers bound d to the
// value) and is shown with its class name and bytes, never interpreted.
func decodeJavaSerialized(d *decoder) any {
	start := d.off
	if d.u16() != javaStreamMagic || d.u16() != javaStreamVersion {
		if d.err == nil {
			d.off = start
			d.fail("not a Java serialization stream")
		}
		return nil
	}
	switch tc := d.u8(); tc {
	case javaTCString:
		n := int(d.u16())
		return decodeModifiedUTF8(d.take(n))
	case javaTCLongString:
		n := d.i64()
		if d.err == nil && (n < 0 || n > int64(d.remaining())) {
			d.fail("Java long string of %d bytes", n)
			return nil
		}
		return decodeModifiedUTF8(d.take(int(n)))
	case javaTCObject:
		class := ""
		if d.u8() == javaTCClassDesc {
			class = d.utf()
		}
		d.off = start
		rest := d.take(d.remaining())
		return map[string]any{"java_class": class, "java_serialized": state.Hex(append([]byte(nil), rest...))}
	}
	d.off = start
	rest := d.take(d.remaining())
	return map[string]any{"java_serialized": state.Hex(append([]byte(nil), rest...))}
}

func isUnknownSerializer(err error) bool {
	var u *UnknownSerializerError
	return errors.As(err, &u)
}

func unknownClass(err error) string {
	var u *UnknownSerializerError
	if errors.As(err, &u) {
		return u.Class
	}
	return "unknown"
}
