package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/query"
	"streamdbg/savepoint"
	"streamdbg/savepoint/diff"
	"streamdbg/savepoint/flink"
	"streamdbg/savepoint/modify"
)

type modifyCmd struct {
	Src        string `arg:"" help:"The savepoint to change (never written to)."`
	Dst        string `arg:"" help:"Where to write the new savepoint (must not exist)."`
	Statements string `arg:"" optional:"" help:"UPDATE, DELETE, INSERT or DROP STATE statements, separated by semicolons."`
	File       string `short:"f" help:"Read the statements from FILE (one transaction)." type:"existingfile"`
	DryRun     bool   `help:"Print the diff the statements would make; write nothing."`
	Format     string `help:"Output of --dry-run: table, json or csv." enum:"table,json,csv" default:"table"`
}

func (m *modifyCmd) Run(e *env) error {
	text := m.Statements
	switch {
	case m.File != "" && text != "":
		return usageError{errors.New("modify: give the statements as an argument or with -f, not both")}
	case m.File != "":
		b, err := os.ReadFile(m.File)
		if err != nil {
			return err
		}
		text = string(b)
	case text == "":
		return usageError{errors.New("modify: which statements? (an argument or -f FILE)")}
	}
	plan, err := m.compile(text)
	if err != nil {
		var qe *query.Error
		if errors.As(err, &qe) {
			if m.File != "" {
				return usageError{fmt.Errorf("%s:%w", m.File, err)}
			}
			return usageError{err}
		}
		return err
	}
	if m.DryRun {
		tmp, err := os.MkdirTemp("", "streamdbg-modify-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dst := filepath.Join(tmp, "sp")
		if err := plan.write(dst); err != nil {
			return err
		}
		before, err := openCatalog(m.Src)
		if err != nil {
			return err
		}
		after, err := openCatalog(dst)
		if err != nil {
			return err
		}
		for _, s := range plan.Statements() {
			fmt.Fprintln(e.stderr, "would run:", s)
		}
		return printDiff(context.Background(), e, before, after, diff.Options{NameA: m.Src, NameB: "(modified)"}, m.Format, false)
	}
	if err := plan.write(m.Dst); err != nil {
		return err
	}
	for _, s := range plan.Statements() {
		fmt.Fprintln(e.stderr, s)
	}
	e.log.Info("savepoint written", "dir", m.Dst)
	return nil
}

// modifyPlan is a checked script against our savepoint or Flink's.
type modifyPlan struct {
	write      func(dst string) error
	Statements func() []string
}

func (m *modifyCmd) compile(text string) (*modifyPlan, error) {
	if flink.IsFlink(m.Src) {
		sp, err := flink.Open(m.Src)
		if err != nil {
			return nil, err
		}
		p, err := modify.CompileFlink(sp, text)
		if err != nil {
			return nil, err
		}
		return &modifyPlan{write: p.Write, Statements: p.Statements}, nil
	}
	src, err := savepoint.Open(vfs.Default, m.Src)
	if err != nil {
		return nil, err
	}
	p, err := modify.Compile(src, text)
	if err != nil {
		return nil, err
	}
	return &modifyPlan{write: func(dst string) error { return p.Write(vfs.Default, dst) }, Statements: p.Statements}, nil
}
