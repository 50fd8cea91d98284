// Command streamdbg is a debugger for stream-processing jobs in the
// terminal. This file only parses the command line and wires packages
// together; see README.md for what each command does.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/alecthomas/kong"
)

// Exit statuses (DESIGN 9).
const (
	exitOK      = 0
	exitFailure = 1 // job failure or bad input
	exitUsage   = 2
	// exitInterrupted is a run stopped by SIGINT (128 + 2, as shells
	// report it), after it said where and wrote the savepoint it was asked.
	exitInterrupted = 130
)

// usageError marks errors that are the command line's fault.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// interruptedError is a run that stopped on an interrupt.
type interruptedError struct{ error }

func (i interruptedError) Unwrap() error { return i.error }

type cli struct {
	Debug     debugCmd     `cmd:"" default:"withargs" help:"Debug a job in the terminal UI (the default command; JOB defaults to wordcount)."`
	Jobs      jobsCmd      `cmd:"" help:"List the example jobs."`
	Run       runCmd       `cmd:"" help:"Run a job headless: sink records as JSON lines on stdout."`
	Query     queryCmd     `cmd:"" help:"Query a savepoint directory (ours or Apache Flink's)."`
	Open      openCmd      `cmd:"" help:"Browse a savepoint in the terminal UI."`
	Savepoint savepointCmd `cmd:"" help:"Inspect savepoints."`
	Diff      diffCmd      `cmd:"" help:"Compare two savepoints (ours or Apache Flink's): entries added, removed and changed, per operator and state."`
	Modify    modifyCmd    `cmd:"" help:"Change state with UPDATE, DELETE, INSERT or DROP STATE, writing a new savepoint."`
	Export    exportCmd    `cmd:"" help:"Export a savepoint's state as Parquet datasets (Hive-partitioned by operator and state)."`
	Verbose   bool         `short:"v" help:"Log more (to stderr)."`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	var c cli
	parser, err := kong.New(&c,
		kong.Name("streamdbg"),
		kong.Description("A debugger for stream-processing jobs: step a job record by record, watch its state, open savepoints (ours and Apache Flink's), query state with SQL."),
		kong.UsageOnError(),
		kong.Exit(func(code int) { panic(exitCode(code)) }),
		kong.Writers(stdout, stderr),
	)
	if err != nil {
		fmt.Fprintln(stderr, "streamdbg:", err)
		return exitFailure
	}
	code := exitOK
	func() {
		defer func() {
			if r := recover(); r != nil {
				if c, ok := r.(exitCode); ok {
					code = int(c)
					return
				}
				panic(r)
			}
		}()
		ctx, err := parser.Parse(args)
		if err != nil {
			fmt.Fprintln(stderr, "streamdbg:", err)
			code = exitUsage
			return
		}
		env := newEnv(c.Verbose, stdout, stderr)
		if err := ctx.Run(env); err != nil {
			fmt.Fprintln(stderr, "streamdbg:", err)
			var u usageError
			if errors.As(err, &u) {
				code = exitUsage
				return
			}
			var i interruptedError
			if errors.As(err, &i) {
				code = exitInterrupted
				return
			}
			code = exitFailure
		}
	}()
	return code
}

// exitCode carries kong's exit (after --help) out of the parser.
type exitCode int
