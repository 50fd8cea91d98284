package tui

import (
	"reflect"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

func reflectType(v any) string { return reflect.TypeOf(v).String() }
