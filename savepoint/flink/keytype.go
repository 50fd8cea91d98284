package flink

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// This file lets a user name the key type of an operator whose checkpoint
// does not store its key serializer: a changelog checkpoint holds it only
// in a materialized part or in its timers' serializers, so one taken before
// the first materialization of an operator without timers has the keys'
// bytes and nothing to read them by.

// keyTypeNames are the type names SetKeyType accepts, with the serializers
// Flink writes those keys with.
var keyTypeNames = map[string]serializer{
	"Long": longSer, "Integer": intSer, "Int": intSer, "Short": shortSer, "Byte": byteSer,
	"Boolean": boolSer, "Double": doubleSer, "Float": floatSer, "Character": charSer, "Char": charSer,
	"String": stringSer, "byte[]": bytesSer,
	// The Java primitives, as a user names the type of a key selector's
	// result (the key itself is boxed, and serialized as its class).
	"long": longSer, "int": intSer, "short": shortSer, "byte": byteSer,
	"boolean": boolSer, "double": doubleSer, "float": floatSer, "char": charSer,
}

// ParseKeyType reads a key type: Long, Integer, Short, Byte, Boolean,
// Double, Float, Character, String (with or without java.lang.), the
// primitives long, int, short, byte, boolean, double, float, char, byte[],
// or TupleN<T1, ..., TN> of those (a Flink Tuple, as keyBy(0) keys are).
func parseKeyType(s string) (serializer, error) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '<'); i >= 0 {
		name := strings.TrimPrefix(s[:i], "org.apache.flink.api.java.tuple.")
		if !strings.HasSuffix(s, ">") || !strings.HasPrefix(name, "Tuple") {
			return nil, fmt.Errorf("key type %q: want TupleN<T1, ..., TN>", s)
		}
		n, err := strconv.Atoi(name[len("Tuple"):])
		if err != nil || n < 1 || n > 25 {
			return nil, fmt.Errorf("key type %q: Tuple1 to Tuple25", s)
		}
		var fields []serializer
		for _, f := range splitTypeArgs(s[i+1 : len(s)-1]) {
			fs, err := parseKeyType(f)
			if err != nil {
				return nil, err
			}
			fields = append(fields, fs)
		}
		if len(fields) != n {
			return nil, fmt.Errorf("key type %q: %d fields for Tuple%d", s, len(fields), n)
		}
		return &tupleSer{class: "org.apache.flink.api.java.tuple." + name, fields: fields}, nil
	}
	if ks, ok := keyTypeNames[strings.TrimPrefix(s, "java.lang.")]; ok {
		return ks, nil
	}
	names := make([]string, 0, len(keyTypeNames))
	for n := range keyTypeNames {
		names = append(names, n)
	}
	slices.Sort(names)
	return nil, fmt.Errorf("key type %q: want one of %s, or TupleN<...> of them", s, strings.Join(names, ", "))
}

// splitTypeArgs splits "A, Tuple2<B, C>, D" at its top-level commas.
func splitTypeArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// SetKeyType names the key type of an operator (its id, uid or name) for
// when the savepoint does not store its key serializer (see keyNotStored);
// a stored one wins, with a note on the operator when they differ. It must
// be called before the savepoint's state is first listed or read.
func (sp *Savepoint) SetKeyType(operator, keyType string) error {
	ks, err := parseKeyType(keyType)
	if err != nil {
		return fmt.Errorf("flink: %w", err)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.listed || len(sp.keyed) > 0 {
		return fmt.Errorf("flink: SetKeyType after the state was read")
	}
	var found bool
	for _, op := range sp.md.operators {
		if sp.matchOperator(op, operator) {
			if sp.keyHints == nil {
				sp.keyHints = map[string]serializer{}
			}
			sp.keyHints[op.id] = ks
			found = true
		}
	}
	if !found {
		return fmt.Errorf("flink: --key-type: no operator %q in the savepoint", operator)
	}
	return nil
}

// addNote adds a note to an operator's OperatorInfo.
func (sp *Savepoint) addNote(op *operatorMeta, note string) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	info := &sp.operators[sp.opIndex(op)]
	if !slices.Contains(info.Notes, note) {
		info.Notes = append(info.Notes, note)
	}
}
