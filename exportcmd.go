package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"streamdbg/export"
	"streamdbg/state"
)

type exportCmd struct {
	Savepoint      string `arg:"" help:"Savepoint directory (ours or Apache Flink's)."`
	Dir            string `arg:"" help:"Output directory: DIR/operator=<name>/state=<name>/*.parquet."`
	Format         string `help:"Output format." enum:"parquet" default:"parquet"`
	KeyGroups      string `help:"Export only key groups A-B (inclusive), e.g. 0-31, so that workers can export one savepoint in parallel; operator state goes with the range that starts at 0."`
	SkipUnreadable bool   `help:"Exit 0 even when some state could not be read (it is still listed)."`
}

func parseKeyGroups(s string) (*state.KeyGroupRange, error) {
	if s == "" {
		return nil, nil
	}
	a, b, ok := strings.Cut(s, "-")
	start, err1 := strconv.Atoi(strings.TrimSpace(a))
	end, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || start < 0 || end < start || end >= state.MaxKeyGroups {
		return nil, fmt.Errorf("--key-groups %q: want A-B with 0 <= A <= B, e.g. 0-31", s)
	}
	return &state.KeyGroupRange{Start: start, End: end}, nil
}

func (x *exportCmd) Run(e *env) error {
	kgs, err := parseKeyGroups(x.KeyGroups)
	if err != nil {
		return usageError{err}
	}
	cat, err := openCatalog(x.Savepoint)
	if err != nil {
		return err
	}
	defer closeCatalog(cat)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := export.Parquet(ctx, cat, x.Dir, export.Options{KeyGroups: kgs})
	if rep != nil {
		for _, f := range rep.Files {
			fmt.Fprintf(e.stdout, "%s\t%d rows\n", f.Path, f.Rows)
		}
		for _, g := range rep.Gaps {
			fmt.Fprintln(e.stderr, "NOT EXPORTED:", g)
		}
	}
	if err != nil {
		return err
	}
	if err := rep.Err(); err != nil && !x.SkipUnreadable {
		return err
	}
	return nil
}
