package streamdbgtest

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/runtime"
	"streamdbg/savepoint"
	"streamdbg/state"
)

// Snapshot is a savepoint of a driven job, held in memory: the same bytes
// streamdbg savepoint writes to disk, so restoring it tests what a real
// restore does (key groups redistributed, operator state split or
// unioned).
type Snapshot struct {
	fs  vfs.FS
	dir string
	job string
	pos int64
}

// Position is the number of source events read when the snapshot was
// taken.
func (s Snapshot) Position() int64 { return s.pos }

// Snapshot takes a savepoint of the job where it is now.
func (d *Driver) Snapshot() Snapshot {
	d.t.Helper()
	d.start()
	fs := vfs.NewMem()
	const dir = "savepoint"
	if err := d.sess.Savepoint(fs, dir); err != nil {
		d.t.Fatalf("streamdbgtest: snapshot of job %q: %v", d.job.Name, err)
	}
	return Snapshot{fs: fs, dir: dir, job: d.job.Name, pos: d.sess.Position()}
}

// Restore starts job from snap with the given parallelism (0: the job's
// own), as `streamdbg run --from-savepoint` does: state maps to operators
// by uid and key groups go to the subtasks that hold them now. The max
// parallelism is the snapshot's unless MaxParallelism or the job sets
// another than the default (a different one is refused). The new
// driver takes its own inputs; those of the snapshot's driver stay there.
func Restore(t testing.TB, job *runtime.Job, snap Snapshot, parallelism int, opts ...Option) *Driver {
	t.Helper()
	if snap.fs == nil {
		t.Fatal("streamdbgtest: Restore: the snapshot is empty (take it with Driver.Snapshot)")
	}
	sp, err := savepoint.Open(snap.fs, snap.dir)
	if err != nil {
		t.Fatalf("streamdbgtest: Restore: open the snapshot of job %q: %v", snap.job, err)
	}
	d := New(t, job, append(opts, Parallelism(parallelism))...)
	if d.cfg.maxParallelism == 0 && job.MaxParallelism == state.DefaultMaxParallelism {
		// As Flink rescales an unset max parallelism to the restored
		// state's: a test need not repeat the snapshot's. (A job that
		// sets 128 itself cannot be told from one that sets nothing.)
		d.cfg.maxParallelism = sp.MaxParallelism()
	}
	d.restore = runtime.FromSavepoint(sp)
	return d
}
