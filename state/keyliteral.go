package state

import (
	"encoding/json"
	"strings"
	"time"
)

// EncodeKeyLiteral encodes a key literal of a query (a dynamic value) as a
// key of the given type would be encoded, so that the key's group can be
// computed without scanning. ok is false when the literal cannot be a key of
// that type; the caller then scans. A string that reads as a number
// (ParseNumber) is that number for a numeric key type, since a query
// compares it with a number as the number.
func EncodeKeyLiteral(typeName string, v any) ([]byte, bool) {
	switch typeName {
	case "string":
		if s, ok := v.(string); ok {
			return String.Append(nil, s), true
		}
	case "int64":
		if i, ok := IntLiteral(v); ok {
			return Int64.Append(nil, i), true
		}
	case "float64":
		if s, ok := v.(string); ok {
			n, ok := ParseNumber(s)
			if !ok {
				return nil, false
			}
			v = n
		}
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
		goType, isJSON := strings.CutPrefix(typeName, "json:")
		if !isJSON || goType == "" {
			break
		}
		if s, ok := v.(string); ok {
			if n, isNum := ParseNumber(s); isNum {
				// The literal equals a JSON string key of its text and a
				// JSON number key of its value: which one the key is, only
				// a Go type of a known kind says.
				switch {
				case goType == "string":
				case jsonNumberTypes[goType]:
					v = n
				default:
					return nil, false
				}
			}
		}
		switch v.(type) {
		case string, int64, float64, bool:
			b, err := json.Marshal(v)
			return b, err == nil
		}
	}
	return nil, false
}

// jsonNumberTypes are the Go types whose JSON is a number.
var jsonNumberTypes = map[string]bool{
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"float32": true, "float64": true,
}
