package runtime

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"streamdbg/state"
)

// mixedState keeps, besides the count (an int64 state: unboxed light
// records), the last word of its key in a string state, cleared every
// third record, and the words seen in a map state: boxed light records,
// clears among them.
type mixedState struct {
	counter
	last  *state.ValueState[string]
	words *state.MapState[string, int64]
	n     int
}

func (m *mixedState) Open(ctx RuntimeContext) (err error) {
	if err = m.counter.Open(ctx); err != nil {
		return err
	}
	if m.last, err = state.Value("last", state.String).Bind(ctx); err != nil {
		return err
	}
	m.words, err = state.Map("words", state.String, state.Int64).Bind(ctx)
	return err
}

func (m *mixedState) Map(w string) (string, error) {
	if _, err := m.counter.Map(w); err != nil {
		return "", err
	}
	m.n++
	if m.n%3 == 0 {
		if err := m.last.Clear(); err != nil {
			return "", err
		}
	} else if err := m.last.Update(fmt.Sprint(w, m.n)); err != nil {
		return "", err
	}
	if m.n%4 == 0 {
		return w, m.words.Remove(w)
	}
	return w, m.words.Put(w, int64(m.n))
}

// TestLightRecsMatchWrites: TakeLightRecs gives the writes a traced run
// traces (the same entries through LightEntryOf and LightEntryAt, values
// through Old and New, flags, and the position of the record, in order), for int64 states (values kept
// unboxed) and boxed ones with clears and deletes, on both backends, with
// the entries kept and starting over every few keys (generations that end
// between takes); and every (generation, index) a record names is one
// LightEntry, and one LightEntry one pair.
func TestLightRecsMatchWrites(t *testing.T) {
	job := func() *Job { return lightJobWith("light-recs", &mixedState{}) }
	for _, backend := range []string{"heap", "pebble"} {
		for _, max := range []int{maxLightEntries, 3} {
			t.Run(fmt.Sprintf("%s/max-%d", backend, max), func(t *testing.T) {
				defer func(n int) { maxLightEntries = n }(maxLightEntries)
				maxLightEntries = max
				describe := func(st, op string, sub, kg int, k, ns, uk, old, nw any, hadOld, cleared bool, pos int64) string {
					return fmt.Sprintf("%s %s[%d] kg %d %v/%v/%v: %v (%v) -> %v cleared %v @%d", st, op, sub, kg, k, ns, uk, old, hadOld, nw, cleared, pos)
				}
				var want, got []string
				type pair struct {
					gen uint32
					idx int
				}
				byPair := map[pair]*LightEntry{}
				byEntry := map[*LightEntry]pair{}
				boxed, clears, int64s := 0, 0, 0
				for _, recs := range []bool{false, true} {
					e, err := NewExecutor(job(), Options{Trace: true, Parallelism: 1, Backend: backend, Output: io.Discard}, nil)
					if err != nil {
						t.Fatal(err)
					}
					if recs {
						e.StartLight(0, nil)
						e.BatchLightWrites(5)
					}
					for n := 0; !e.Finished(); n++ {
						if err := e.Next(); err != nil && err != ErrFinished {
							t.Fatal(err)
						}
						if !recs {
							for _, ev := range e.TakeTrace() {
								if ev.Kind == TraceStateWrite {
									want = append(want, describe(ev.State, ev.Operator, ev.Subtask, ev.KeyGroup, ev.Key, ev.Namespace, ev.UserKey, ev.Old, ev.New, ev.HadOld, ev.Cleared, e.Position()))
								}
							}
							continue
						}
						e.TakeLight()
						if n%5 != 4 && !e.Finished() {
							continue
						}
						b := e.TakeLightRecs()
						for i := range b.Recs {
							r := &b.Recs[i]
							en := e.LightEntryOf(r)
							gen, idx := r.Entry()
							p := pair{gen, idx}
							if q, ok := byEntry[en]; ok && q != p {
								t.Fatalf("LightEntry %v named %v and %v", en.Key, q, p)
							}
							if f, ok := byPair[p]; ok && f != en {
								t.Fatalf("%v names LightEntries %v and %v", p, f.Key, en.Key)
							}
							byPair[p], byEntry[en] = en, p
							// LightEntryAt is the entry's fields without a LightEntry.
							at := e.LightEntryAt(r)
							if !reflect.DeepEqual(at, *en) {
								t.Fatalf("LightEntryAt %+v, LightEntryOf %+v", at, *en)
							}
							got = append(got, describe(at.State, at.Operator, at.Subtask, at.KeyGroup, at.Key, at.Namespace, at.UserKey, b.Old(r), b.New(r), r.HadOld(), r.Cleared(), r.Position))
							if r.Cleared() {
								clears++
							}
							if en.State == "n" {
								int64s++
							}
						}
						boxed += len(b.Values)
					}
					e.Close()
				}
				if len(want) < 2*160 || strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("records:\n%s\nwrites (%d):\n%s", strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
				}
				t.Logf("%d writes: %d int64, %d clears, %d boxed values", len(got), int64s, clears, boxed)
				if int64s != 160 || clears < 40 || boxed < 300 {
					t.Fatalf("%d int64 writes, %d clears, %d boxed values", int64s, clears, boxed)
				}
				if max < 11 && len(byEntry) <= 3*11 {
					t.Errorf("%d LightEntries with at most %d kept: they never started over", len(byEntry), max)
				}
			})
		}
	}
}

// TestLightDispSize: a light run keeps an entry's key group and where its
// bytes are, 24 bytes without pointers, for every key it writes (200k in
// the session's BenchmarkContinue): no decoded display value per entry for
// the garbage collector to mark, and no LightEntry (112 bytes and a
// pointer) for a reader of LightRecs.
func TestLightDispSize(t *testing.T) {
	if n := unsafe.Sizeof(lightDisp{}); n > 24 {
		t.Fatalf("lightDisp is %d bytes, more than 24", n)
	}
	ty := reflect.TypeFor[lightDisp]()
	for i := range ty.NumField() {
		switch k := ty.Field(i).Type.Kind(); k {
		case reflect.Int32, reflect.Uint32, reflect.Int64, reflect.Uint64:
		default:
			t.Errorf("lightDisp.%s is a %s: it must hold no pointer", ty.Field(i).Name, k)
		}
	}
}
