package state

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// EncodeKeyLiteral encodes a key literal of a query (a dynamic value) as a
// key of the given type would be encoded, so that the key's group can be
// computed without scanning. ok is false when the literal cannot be a key of
// that type; the caller then scans.
func EncodeKeyLiteral(typeName string, v any) ([]byte, bool) {
	switch typeName {
	case "string":
		if s, ok := v.(string); ok {
			return String.Append(nil, s), true
		}
	case "int64":
		switch x := v.(type) {
		case int64:
			return Int64.Append(nil, x), true
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return Int64.Append(nil, int64(x)), true
			}
		case string:
			if i, err := strconv.ParseInt(x, 10, 64); err == nil {
				return Int64.Append(nil, i), true
			}
		}
	case "float64":
		switch x := v.(type) {
		case int64:
			return Float64.Append(nil, float64(x)), true
		case float64:
			return Float64.Append(nil, x), true
		}
	case "bool":
		if b, ok := v.(bool); ok {
			return Bool.Append(nil, b), true
		}
	case "time":
		switch x := v.(type) {
		case time.Time:
			return Time.Append(nil, x), true
		case string:
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return Time.Append(nil, t), true
			}
		}
	default:
		// JSON keys of a scalar type encode as their JSON text.
		if len(typeName) > 5 && typeName[:5] == "json:" {
			switch v.(type) {
			case string, int64, float64, bool:
				b, err := json.Marshal(v)
				return b, err == nil
			}
		}
	}
	return nil, false
}
