//go:build !linux

package savepoint

func renameat2NoReplace(from, to string) error { return errNoRenameat2 }
