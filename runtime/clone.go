package runtime

import "reflect"

// CloneFunc gives each subtask its own copy of a user function, as Flink
// gives each subtask its own deserialized copy: a function that keeps state
// handles in its fields (set in Open) must not share them across subtasks.
// A pointer to a struct is copied shallowly; anything else is shared.
// Packages that add operators use it for the functions they wrap.
func CloneFunc[F any](f F) F {
	v := reflect.ValueOf(f)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return f
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface().(F)
}
