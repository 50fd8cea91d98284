package main

import "streamdbg/runtime/session"

// The commands' AfterApply hooks (kong calls them once the arguments are
// set) read every savepoint argument through session.SavepointDir.

func (f *jobFlags) AfterApply() error {
	if f.FromSavepoint != "" {
		f.FromSavepoint = session.SavepointDir(f.FromSavepoint)
	}
	return nil
}

func (q *queryCmd) AfterApply() error   { q.Target = session.SavepointDir(q.Target); return nil }
func (o *openCmd) AfterApply() error    { o.Dir = session.SavepointDir(o.Dir); return nil }
func (i *inspectCmd) AfterApply() error { i.Dir = session.SavepointDir(i.Dir); return nil }
func (c *checkCmd) AfterApply() error   { c.Dir = session.SavepointDir(c.Dir); return nil }
func (d *diffCmd) AfterApply() error {
	d.A, d.B = session.SavepointDir(d.A), session.SavepointDir(d.B)
	return nil
}
func (m *modifyCmd) AfterApply() error { m.Src = session.SavepointDir(m.Src); return nil }
func (x *exportCmd) AfterApply() error { x.Savepoint = session.SavepointDir(x.Savepoint); return nil }
