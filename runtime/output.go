package runtime

import (
	"bufio"
	"encoding/json"
	"io"
)

// JSONAppender is implemented by records that encode themselves as JSON
// faster than encoding/json can.
type JSONAppender interface {
	AppendJSON(dst []byte) []byte
}

// jsonWriter writes sink records as JSON lines.
type jsonWriter struct {
	w   *bufio.Writer
	buf []byte
}

func newJSONWriter(w io.Writer) *jsonWriter {
	if w == nil {
		return &jsonWriter{}
	}
	return &jsonWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

func (e *Executor) writeJSON(v any) error {
	j := e.out
	if j.w == nil {
		return nil
	}
	if a, ok := v.(JSONAppender); ok {
		if j.w.Available() >= 512 {
			// Straight into the writer's buffer: Write then has nothing
			// to copy (the bytes are where it would copy them).
			b := a.AppendJSON(j.w.AvailableBuffer())
			_, err := j.w.Write(append(b, '\n'))
			return err
		}
		j.buf = a.AppendJSON(j.buf[:0])
	} else {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		j.buf = append(j.buf[:0], b...)
	}
	j.buf = append(j.buf, '\n')
	_, err := j.w.Write(j.buf)
	return err
}

// Flush writes buffered sink output.
func (e *Executor) Flush() error {
	if e.out.w == nil {
		return nil
	}
	return e.out.w.Flush()
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
