package runtime

import (
	"encoding/json"
	"io"
)

// JSONAppender is implemented by records that encode themselves as JSON
// faster than encoding/json can.
type JSONAppender interface {
	AppendJSON(dst []byte) []byte
}

// jsonWriter writes sink records as JSON lines, buffered: a record is
// encoded straight into the buffer, which goes to w whenever it holds
// outBuffer bytes or more, and on Flush. A write error sticks: what
// follows is not written.
type jsonWriter struct {
	w   io.Writer // nil: the output is discarded
	buf []byte
	err error
}

const outBuffer = 64 << 10

func newJSONWriter(w io.Writer) *jsonWriter {
	if w == nil {
		return &jsonWriter{}
	}
	return &jsonWriter{w: w, buf: make([]byte, 0, outBuffer+512)}
}

// appendJSON writes the record a encodes (a method of the executor: a
// panic in AppendJSON shows the user's frames down to here, trimStack).
func (e *Executor) appendJSON(a JSONAppender) error {
	j := e.out
	if j.w == nil {
		return nil
	}
	if j.err != nil {
		return j.err
	}
	j.buf = append(a.AppendJSON(j.buf), '\n')
	if len(j.buf) >= outBuffer {
		return j.flush()
	}
	return nil
}

func (e *Executor) writeJSON(v any) error {
	if a, ok := v.(JSONAppender); ok {
		return e.appendJSON(a)
	}
	j := e.out
	if j.w == nil {
		return nil
	}
	if j.err != nil {
		return j.err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	j.buf = append(append(j.buf, b...), '\n')
	if len(j.buf) >= outBuffer {
		return j.flush()
	}
	return nil
}

// flush writes the buffer to w.
func (j *jsonWriter) flush() error {
	if j.err != nil || len(j.buf) == 0 {
		return j.err
	}
	n, err := j.w.Write(j.buf)
	if err == nil && n < len(j.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		j.err = err
		return err
	}
	j.buf = j.buf[:0]
	return nil
}

// Flush writes buffered sink output.
func (e *Executor) Flush() error {
	if e.out.w == nil {
		return nil
	}
	return e.out.flush()
}

// observed reports whether a trace or a capture sees sink records
// (recordOutput has something to do).
func (e *Executor) observed() bool { return e.trace != nil || e.opts.Capture != nil }

func (e *Executor) recordOutput(ctx *OperatorContext, v any) {
	if e.trace != nil {
		e.trace.output(ctx, plainValue(v))
	}
	if e.opts.Capture != nil {
		e.capture(ctx, "", v, ctx.rec)
	}
}
