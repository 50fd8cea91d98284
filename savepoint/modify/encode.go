package modify

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"streamdbg/state"
)

// writable reports whether values of a stored type name can be encoded
// here, and what a statement should write for them.
func writable(typeName string) (ok bool, want string) {
	switch typeName {
	case "int64":
		return true, "an integer"
	case "float64":
		return true, "a number"
	case "string":
		return true, "a string"
	case "bool":
		return true, "TRUE or FALSE"
	case "time":
		return true, "a time (an RFC 3339 string)"
	case "bytes":
		return true, "bytes (a '0x...' string)"
	case "void", "":
		return true, "NULL"
	}
	if strings.HasPrefix(typeName, "json:") {
		return true, "a JSON value"
	}
	return false, ""
}

// staticFits reports whether an expression of a static type (as
// query.CompileTyped gives it) can be written as typeName; "any" always
// fits here and is checked row by row.
func staticFits(typeName, static string) bool {
	if static == "any" {
		return true
	}
	switch typeName {
	case "int64":
		return static == "int64"
	case "float64":
		return static == "int64" || static == "float64"
	case "string":
		return static == "string"
	case "bool":
		return static == "bool"
	case "time":
		return static == "time" || static == "string"
	case "bytes":
		return static == "bytes" || static == "string"
	case "void", "":
		return static == "null"
	}
	return static != "null" // JSON: anything but NULL (use DELETE)
}

// encode turns a dynamic value into the bytes of a stored type. text says
// the expression is a string by its static type (a literal): into a JSON
// type it is JSON text, as a string literal is for a JSON column in SQL,
// not a JSON string; a string read from state stays a string.
func encode(typeName string, v any, text bool) ([]byte, error) {
	bad := func() ([]byte, error) {
		_, want := writable(typeName)
		return nil, fmt.Errorf("%s is not %s (type %s)", describe(v), want, typeName)
	}
	switch typeName {
	case "int64":
		if x, ok := v.(int64); ok {
			return state.Int64.Append(nil, x), nil
		}
		return bad()
	case "float64":
		switch x := v.(type) {
		case int64:
			return state.Float64.Append(nil, float64(x)), nil
		case float64:
			return state.Float64.Append(nil, x), nil
		}
		return bad()
	case "string":
		if x, ok := v.(string); ok {
			return state.String.Append(nil, x), nil
		}
		return bad()
	case "bool":
		if x, ok := v.(bool); ok {
			return state.Bool.Append(nil, x), nil
		}
		return bad()
	case "time":
		switch x := v.(type) {
		case time.Time:
			return state.Time.Append(nil, x), nil
		case string:
			t, err := time.Parse(time.RFC3339Nano, x)
			if err != nil {
				return nil, fmt.Errorf("%q is not an RFC 3339 time", x)
			}
			return state.Time.Append(nil, t), nil
		}
		return bad()
	case "bytes":
		switch x := v.(type) {
		case []byte:
			return slices.Clone(x), nil
		case state.Hex:
			return slices.Clone([]byte(x)), nil
		case string:
			if b, err := hex.DecodeString(strings.TrimPrefix(x, "0x")); err == nil && strings.HasPrefix(x, "0x") {
				return b, nil
			}
		}
		return bad()
	case "void", "":
		if v == nil {
			return nil, nil
		}
		return bad()
	}
	if strings.HasPrefix(typeName, "json:") {
		if v == nil {
			return nil, fmt.Errorf("NULL cannot be stored (type %s); DELETE the entry instead", typeName)
		}
		if x, ok := v.(string); ok && text {
			var b bytes.Buffer
			if err := json.Compact(&b, []byte(x)); err != nil {
				return nil, fmt.Errorf("%q is not JSON text (type %s: %v); a JSON string is written in double quotes, '\"…\"'", x, typeName, err)
			}
			return b.Bytes(), nil
		}
		j, err := toJSON(v, 0)
		if err != nil {
			return nil, err
		}
		return json.Marshal(j)
	}
	return nil, fmt.Errorf("values of type %s cannot be written (no encoder for it)", typeName)
}

// toJSON converts a dynamic value into what encoding/json marshals alike.
func toJSON(v any, depth int) (any, error) {
	if depth > 64 {
		return nil, fmt.Errorf("value nested too deeply")
	}
	switch x := v.(type) {
	case nil, bool, int64, string:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v cannot be stored as JSON", x)
		}
		return x, nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case []byte:
		return "0x" + hex.EncodeToString(x), nil
	case state.Hex:
		return "0x" + hex.EncodeToString(x), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			j, err := toJSON(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			j, err := toJSON(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = j
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s cannot be stored as JSON", describe(v))
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return fmt.Sprintf("%q (a string)", x)
	case int64:
		return fmt.Sprintf("%d (an integer)", x)
	case float64:
		return fmt.Sprintf("%v (a number)", x)
	case bool:
		return fmt.Sprintf("%v (a boolean)", x)
	}
	return fmt.Sprintf("%v", v)
}

// jsonKind names the kind of a JSON text's top-level value ("" when it is
// empty).
func jsonKind(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return ""
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// sameJSONKind refuses a new JSON value of another kind than the value it
// replaces: the job decodes both into one Go type, so an object cannot
// become a number, and nothing here knows that type to check more.
func sameJSONKind(typeName string, old, new []byte) error {
	if !strings.HasPrefix(typeName, "json:") {
		return nil
	}
	if o, n := jsonKind(old), jsonKind(new); o != "" && o != "null" && o != n {
		return fmt.Errorf("the value is a JSON %s, the new value a JSON %s (%s): the job could not restore it", o, n, typeName)
	}
	return nil
}
