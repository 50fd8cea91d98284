package runtime

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A function value (RichMap and the other Rich constructors) is copied
// for each subtask from the value given to the job, and copied again when
// the job restarts from a checkpoint: back, restore and recovery bring
// back declared state, not the function's own fields. A field that changes
// after Open is such lost state. The executor takes a print of every
// function's fields after Open and CheckFunctionState compares: a function
// whose fields moved fails the check naming the operator and the field,
// before back or a savepoint would silently lose them.

// FunctionHolder is an Operator that runs a user's function value: its
// fields are checked by CheckFunctionState. The operators of this package
// and of runtime/window are.
type FunctionHolder interface{ UserFunction() any }

// UserFunction is the function value the operator runs.
func (u *userOp) UserFunction() any { return u.fn }

// UserFunction is the function value the operator runs.
func (o *intervalJoinOp[T1, T2, U]) UserFunction() any { return o.f }

// fieldPrint is a printable copy of the fields of a function value, by
// field path.
type fieldPrint map[string]string

// printFunction prints the fields of a pointer to a struct; nil for any
// other function (a plain function or a value has no fields to change).
func printFunction(fn any) fieldPrint {
	v := reflect.ValueOf(fn)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	p := fieldPrint{}
	printFields(p, "", v.Elem(), 0, map[uintptr]bool{})
	return p
}

// maxPrint bounds what one field's print holds: beyond it the print ends
// with the field's length, so a field that grows still shows as changed.
const maxPrint = 4096

func printFields(p fieldPrint, prefix string, v reflect.Value, depth int, seen map[uintptr]bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		path := prefix + f.Name
		fv := v.Field(i)
		if skipped(fv.Type()) {
			continue
		}
		if fv.Kind() == reflect.Struct && depth < 3 {
			printFields(p, path+".", fv, depth+1, seen)
			continue
		}
		var b strings.Builder
		printValue(&b, fv, depth, seen)
		s := b.String()
		if len(s) > maxPrint {
			s = s[:maxPrint] + "… (" + strconv.Itoa(len(s)) + " bytes)"
		}
		p[path] = s
	}
}

// skipped are the types that are not the function's own state: handles
// of declared state and the runtime's context, synchronisation, loggers,
// functions and channels.
func skipped(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	}
	switch pkg := t.PkgPath(); {
	case pkg == "streamdbg/state", strings.HasPrefix(pkg, "streamdbg/runtime"),
		pkg == "sync", pkg == "sync/atomic", pkg == "log/slog", pkg == "log", pkg == "testing",
		pkg == "io", pkg == "os", pkg == "bufio", pkg == "context", pkg == "regexp", pkg == "math/rand", pkg == "math/rand/v2":
		return true
	}
	return false
}

func printValue(b *strings.Builder, v reflect.Value, depth int, seen map[uintptr]bool) {
	if b.Len() > maxPrint {
		return
	}
	switch v.Kind() {
	case reflect.Invalid:
		b.WriteString("nil")
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if skipped(v.Type()) || seen[v.Pointer()] || depth >= 4 {
			b.WriteString("&…")
			return
		}
		seen[v.Pointer()] = true
		defer delete(seen, v.Pointer())
		b.WriteByte('&')
		printValue(b, v.Elem(), depth+1, seen)
	case reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if skipped(v.Elem().Type()) {
			b.WriteString("…")
			return
		}
		printValue(b, v.Elem(), depth, seen)
	case reflect.Struct:
		b.WriteByte('{')
		for i := range v.NumField() {
			if skipped(v.Field(i).Type()) {
				continue
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			printValue(b, v.Field(i), depth+1, seen)
		}
		b.WriteByte('}')
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("nil")
			return
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(' ')
			}
			printValue(b, v.Index(i), depth+1, seen)
			if b.Len() > maxPrint {
				break
			}
		}
		b.WriteString("]#" + strconv.Itoa(v.Len()))
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		type kv struct{ k, v string }
		var kvs []kv
		it := v.MapRange()
		for it.Next() {
			var kb, vb strings.Builder
			printValue(&kb, it.Key(), depth+1, seen)
			printValue(&vb, it.Value(), depth+1, seen)
			kvs = append(kvs, kv{kb.String(), vb.String()})
		}
		slices.SortFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		b.WriteString("map[")
		for i, e := range kvs {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(e.k + ":" + e.v)
		}
		b.WriteString("]#" + strconv.Itoa(v.Len()))
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		b.WriteString("…")
	default:
		fmt.Fprintf(b, "%v", v)
	}
}

// FunctionStateError is a function value that keeps state outside its
// declared state: a field that changed after Open.
type FunctionStateError struct {
	Operator string
	Subtask  int
	Function string // the function's type
	Field    string
	Before   string
	After    string
}

func (e *FunctionStateError) Error() string {
	return fmt.Sprintf("operator %q (subtask %d): field %s of its function %s changed after Open (%s -> %s): that is state outside the declared state, which back, savepoints and recovery do not keep. Keep it in keyed state (state.Value, List, Map) or in operator state (CheckpointedFunction), or leave the field alone after Open",
		e.Operator, e.Subtask, e.Field, e.Function, short(e.Before), short(e.After))
}

func short(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// printAfterOpen takes the print of inst's function, once it is open.
func (inst *opInstance) printAfterOpen() {
	if h, ok := inst.op.(FunctionHolder); ok {
		inst.fnPrint = printFunction(h.UserFunction())
	}
}

// CheckFunctionState reports the first function value whose fields
// changed since Open (a *FunctionStateError), in task and subtask order:
// state that back, savepoints and recovery would lose.
func (e *Executor) CheckFunctionState() error {
	for _, st := range e.subtasks {
		for _, inst := range st.ops {
			if inst.fnPrint == nil {
				continue
			}
			fn := inst.op.(FunctionHolder).UserFunction()
			now := printFunction(fn)
			fields := make([]string, 0, len(now))
			for f := range now {
				fields = append(fields, f)
			}
			slices.Sort(fields)
			for _, f := range fields {
				if before := inst.fnPrint[f]; before != now[f] {
					return &FunctionStateError{Operator: inst.info.Name, Subtask: st.index, Function: reflect.TypeOf(fn).String(),
						Field: f, Before: before, After: now[f]}
				}
			}
		}
	}
	return nil
}
