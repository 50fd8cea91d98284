package main

import "streamdbg/runtime/session"

// savepointDir reads a savepoint argument (session.SavepointDir).
func savepointDir(p string) string { return session.SavepointDir(p) }

// The commands' AfterApply hooks (kong calls them once the arguments are
// set) read every savepoint argument through savepointDir.

func (f *jobFlags) AfterApply() error {
	if f.FromSavepoint != "" {
		f.FromSavepoint = savepointDir(f.FromSavepoint)
	}
	return nil
}

func (q *queryCmd) AfterApply() error   { q.Target = savepointDir(q.Target); return nil }
func (o *openCmd) AfterApply() error    { o.Dir = savepointDir(o.Dir); return nil }
func (i *inspectCmd) AfterApply() error { i.Dir = savepointDir(i.Dir); return nil }
func (c *checkCmd) AfterApply() error   { c.Dir = savepointDir(c.Dir); return nil }
func (d *diffCmd) AfterApply() error {
	d.A, d.B = savepointDir(d.A), savepointDir(d.B)
	return nil
}
func (m *modifyCmd) AfterApply() error { m.Src = savepointDir(m.Src); return nil }
func (x *exportCmd) AfterApply() error { x.Savepoint = savepointDir(x.Savepoint); return nil }
