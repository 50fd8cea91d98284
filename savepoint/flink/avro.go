package flink

import (
	"encoding/json"
	"fmt"
)

// avroSer decodes values of Flink's AvroSerializer. It does not write
// standard Avro binary: it goes through Flink's DataOutputEncoder, which
// writes ints and longs big-endian, strings and bytes with an int length,
// enums and union branches as an int, and array/map blocks with a
// variable-length count ending in 0.
type avroSer struct {
	class  string
	schema *avroType
}

func (a *avroSer) decode(d *decoder) any { return a.schema.decode(d, 0) }
func (a *avroSer) typeName() string      { return a.class }
func (a *avroSer) fixedLen() int         { return -1 }

// readAvroSnapshot reads AvroSerializerSnapshot version 3: the record class
// and the writer schema, both as Flink strings (StringValue encoding).
func readAvroSnapshot(d *decoder, version int) serializer {
	if version != 3 {
		d.failErr(ErrUnsupported, "Avro serializer snapshot version %d not supported", version)
		return nil
	}
	class, _ := d.flinkString()
	schema, _ := d.flinkString()
	if d.err != nil {
		return nil
	}
	var raw any
	if err := json.Unmarshal([]byte(schema), &raw); err != nil {
		d.fail("Avro schema of %s: %v", class, err)
		return nil
	}
	names := map[string]*avroType{}
	t, err := parseAvroType(raw, names, 0)
	if err != nil {
		d.fail("Avro schema of %s: %v", class, err)
		return nil
	}
	return &avroSer{class: class, schema: t}
}

type avroType struct {
	kind    string // null boolean int long float double bytes string record enum array map fixed union
	fields  []avroField
	symbols []string
	items   *avroType // array items, map values
	size    int       // fixed
	union   []*avroType
}

type avroField struct {
	name string
	typ  *avroType
}

func parseAvroType(raw any, names map[string]*avroType, depth int) (*avroType, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("schema nested too deep")
	}
	switch x := raw.(type) {
	case string:
		switch x {
		case "null", "boolean", "int", "long", "float", "double", "bytes", "string":
			return &avroType{kind: x}, nil
		}
		if t, ok := names[x]; ok {
			return t, nil
		}
		return nil, fmt.Errorf("unknown type %q", x)
	case []any:
		u := &avroType{kind: "union"}
		for _, b := range x {
			t, err := parseAvroType(b, names, depth+1)
			if err != nil {
				return nil, err
			}
			u.union = append(u.union, t)
		}
		return u, nil
	case map[string]any:
		kind, _ := x["type"].(string)
		switch kind {
		case "record", "error":
			t := &avroType{kind: "record"}
			if n, ok := x["name"].(string); ok {
				names[n] = t
				if ns, ok := x["namespace"].(string); ok && ns != "" {
					names[ns+"."+n] = t
				}
			}
			fields, _ := x["fields"].([]any)
			for _, f := range fields {
				fm, ok := f.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("bad record field")
				}
				name, _ := fm["name"].(string)
				ft, err := parseAvroType(fm["type"], names, depth+1)
				if err != nil {
					return nil, fmt.Errorf("field %s: %w", name, err)
				}
				t.fields = append(t.fields, avroField{name: name, typ: ft})
			}
			return t, nil
		case "enum":
			t := &avroType{kind: "enum"}
			if n, ok := x["name"].(string); ok {
				names[n] = t
			}
			syms, _ := x["symbols"].([]any)
			for _, s := range syms {
				str, _ := s.(string)
				t.symbols = append(t.symbols, str)
			}
			return t, nil
		case "array", "map":
			key := "items"
			if kind == "map" {
				key = "values"
			}
			it, err := parseAvroType(x[key], names, depth+1)
			if err != nil {
				return nil, err
			}
			return &avroType{kind: kind, items: it}, nil
		case "fixed":
			size, _ := x["size"].(float64)
			if size < 0 || size > 1<<20 {
				return nil, fmt.Errorf("fixed size %v", size)
			}
			t := &avroType{kind: "fixed", size: int(size)}
			if n, ok := x["name"].(string); ok {
				names[n] = t
			}
			return t, nil
		}
		// A primitive with attributes (e.g. a logical type).
		return parseAvroType(kind, names, depth+1)
	}
	return nil, fmt.Errorf("bad schema %v", raw)
}

func (t *avroType) decode(d *decoder, depth int) any {
	if d.err != nil {
		return nil
	}
	if depth > maxNesting {
		d.fail("Avro value nested too deep")
		return nil
	}
	switch t.kind {
	case "null":
		return nil
	case "boolean":
		return d.boolean()
	case "int":
		return int64(d.i32())
	case "long":
		return d.i64()
	case "float":
		return float64(d.f32())
	case "double":
		return d.f64()
	case "bytes":
		return append([]byte(nil), d.take(d.count("Avro bytes", 1))...)
	case "string":
		return string(d.take(d.count("Avro string byte", 1)))
	case "fixed":
		return append([]byte(nil), d.take(t.size)...)
	case "enum":
		i := d.i32()
		if d.err == nil && (i < 0 || int(i) >= len(t.symbols)) {
			d.fail("Avro enum index %d of %d", i, len(t.symbols))
			return nil
		}
		if d.err != nil {
			return nil
		}
		return t.symbols[i]
	case "union":
		i := d.i32()
		if d.err == nil && (i < 0 || int(i) >= len(t.union)) {
			d.fail("Avro union branch %d of %d", i, len(t.union))
			return nil
		}
		if d.err != nil {
			return nil
		}
		return t.union[i].decode(d, depth+1)
	case "record":
		out := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			out[f.name] = f.typ.decode(d, depth+1)
		}
		return out
	case "array", "map":
		var list []any
		m := map[string]any{}
		// Items may take no bytes (null, empty records): the item count
		// over all blocks is capped by the bytes there were to begin with.
		budget := int64(d.remaining())
		for {
			n := d.varUint()
			if d.err != nil || n == 0 {
				break
			}
			if budget -= int64(n); budget < 0 {
				d.fail("Avro %s of more items than bytes", t.kind)
				return nil
			}
			for range n {
				if t.kind == "map" {
					k := string(d.take(d.count("Avro string byte", 1)))
					m[k] = t.items.decode(d, depth+1)
				} else {
					list = append(list, t.items.decode(d, depth+1))
				}
				if d.err != nil {
					return nil
				}
			}
		}
		if t.kind == "map" {
			return m
		}
		if list == nil {
			list = []any{}
		}
		return list
	}
	d.fail("Avro type %s", t.kind)
	return nil
}
