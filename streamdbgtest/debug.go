package streamdbgtest

import (
	"flag"
	"os"

	"streamdbg/tui"
)

var debugFlag = flag.Bool("streamdbg.debug", false, "streamdbgtest: open the terminal debugger where a test calls Debug, and where a driven test fails")

// Debug opens the terminal debugger (the same TUI as streamdbg debug) on
// the job where it is now, when the test runs with -streamdbg.debug; it
// returns when the debugger quits, and does nothing without the flag. A
// test that fails opens it by itself under the flag, at the point where
// it failed. Step, go back, query and inspect as in the CLI; the test's
// inputs wait (next reports "waiting for input"). What the job emits on
// from there reaches the test's readers as any other output, once; going
// back there does not take back what the test read.
func (d *Driver) Debug() {
	d.t.Helper()
	if !*debugFlag {
		return
	}
	d.start()
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		d.t.Logf("streamdbgtest: Debug: no terminal to open the debugger on: %v", err)
		return
	}
	defer tty.Close()
	d.debugOn(tui.Options{Input: tty, Output: tty})
}

// debugOn runs the debugger on the session on the terminal o names.
func (d *Driver) debugOn(o tui.Options) {
	d.t.Helper()
	if err := d.sess.SetTrace(true); err != nil {
		d.t.Logf("streamdbgtest: Debug: %v", err)
		return
	}
	d.t.Logf("streamdbgtest: debugging job %q at record %d (q quits)", d.job.Name, d.sess.Position())
	if err := tui.Run(d.sess, o); err != nil {
		d.t.Logf("streamdbgtest: Debug: %v", err)
	}
	// Reads that back undid in the debugger are not the test's any more.
	if n := d.sess.Executor().Reads() - d.sched.base; n < int64(len(d.sched.log)) {
		d.sched.log = d.sched.log[:n]
	}
}
