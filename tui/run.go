package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"

	"streamdbg/runtime/session"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// Options configure a TUI program.
type Options struct {
	// Input and Output default to the terminal (stdin, stdout).
	Input  io.Reader
	Output io.Writer
	// NoColor forces plain output; NO_COLOR in the environment does too.
	NoColor bool
	// Width and Height, when set, are the screen's size for an Output that
	// is not a terminal (a test's buffer), whose size cannot be asked.
	Width, Height int
}

func (o Options) noColor() bool { return o.NoColor || os.Getenv("NO_COLOR") != "" }

func (o Options) program(m tea.Model) *tea.Program {
	var opts []tea.ProgramOption
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	if o.Width > 0 && o.Height > 0 {
		opts = append(opts, tea.WithWindowSize(o.Width, o.Height))
	}
	return tea.NewProgram(m, opts...)
}

// errNoSession is returned by Run for a nil session.
var errNoSession = errors.New("tui: no session")

// Run opens the debugger on a session: this is how a user's own main
// debugs their job (build a runtime.Job, session.New, tui.Run), and how
// the CLI's example jobs are debugged. It returns when the user quits.
func Run(s *session.Session, o Options) error {
	if s == nil {
		return errNoSession
	}
	_, err := o.program(New(s, o)).Run()
	return err
}

// RunFailure shows why a job could not start (session.New failed): the
// error with its operator, record and stack, until the user quits. It
// returns the job's error, so that a command line exits with a failure.
func RunFailure(err error, o Options) error {
	if _, rerr := o.program(newFailureModel(err, o)).Run(); rerr != nil {
		return rerr
	}
	return err
}

// Browse opens the savepoint browser on a directory (ours or Apache Flink's).
func Browse(dir string, o Options) error {
	st := styles.New(true, o.noColor())
	k := keys.Default()
	b, err := openBrowser(dir, &st, &k, false)
	if err != nil {
		return err
	}
	defer b.sp.Close()
	_, err = o.program(&browserModel{b: b, st: &st, noColor: o.noColor()}).Run()
	return err
}

// BrowseSavepoint is Browse over a savepoint the caller opened (a Flink
// savepoint named from its compiled SQL plan: session.NewSavepoint).
func BrowseSavepoint(sp *session.Savepoint, o Options) error {
	st := styles.New(true, o.noColor())
	k := keys.Default()
	b := newBrowser(sp, &st, &k, false)
	_, err := o.program(&browserModel{b: b, st: &st, noColor: o.noColor()}).Run()
	return err
}

// browserModel runs a browser as its own program.
type browserModel struct {
	b       *browser
	st      *styles.Styles
	noColor bool
}

func (m *browserModel) Init() tea.Cmd { return tea.RequestBackgroundColor }

func (m *browserModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if bg, ok := msg.(tea.BackgroundColorMsg); ok {
		*m.st = styles.New(bg.IsDark(), m.noColor)
		return m, nil
	}
	return m, m.b.Update(msg)
}

func (m *browserModel) View() tea.View {
	v := tea.NewView(m.b.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

// failureModel shows a job that could not start.
type failureModel struct {
	st      styles.Styles
	noColor bool
	pane    *textList
	keys    keys.KeyMap
	w, h    int
}

func newFailureModel(err error, o Options) *failureModel {
	m := &failureModel{st: styles.New(true, o.noColor()), noColor: o.noColor(), keys: keys.Default()}
	var lines []string
	if f := session.DescribeFailure(err); f != nil {
		lines = failureLines(f)
	} else {
		lines = strings.Split(err.Error(), "\n")
	}
	lines = append(lines, "", "The job could not start. Fix the job and run again; q quits.")
	m.pane = newTextList(&m.keys, &m.st, "The job failed to start")
	m.pane.wrap, m.pane.noCursor = true, true
	m.pane.setLines(lines, 0)
	m.setSize(120, 40)
	return m
}

func (m *failureModel) setSize(w, h int) {
	m.w, m.h = w, h
	m.pane.SetSize(w, max(3, h-2))
}

func (m *failureModel) Init() tea.Cmd { return tea.RequestBackgroundColor }

func (m *failureModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
	case tea.BackgroundColorMsg:
		m.st = styles.New(msg.IsDark(), m.noColor)
	case tea.KeyPressMsg:
		if k := msg.String(); k == "q" || k == "ctrl+c" || k == "esc" {
			return m, tea.Quit
		}
		m.pane.Update(msg)
	case tea.MouseWheelMsg:
		m.pane.Update(wheelMsg{up: msg.Button == tea.MouseWheelUp})
	}
	return m, nil
}

func (m *failureModel) View() tea.View {
	head := fit(" "+m.st.Header.Render("streamdbg")+" · "+m.st.Failed.Render("failed to start"), m.w)
	body := m.pane.View(true)
	foot := fit(" "+m.st.Status.Render("q quit · ↑/↓ scroll"), m.w)
	v := tea.NewView(strings.Join([]string{head, body, foot}, "\n"))
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

// NotTerminalHint is what the CLI says when stdout is not a terminal.
func NotTerminalHint(cmd string) string {
	return fmt.Sprintf("%s needs a terminal (stdout is not one); for a headless run try 'streamdbg run' (or 'streamdbg query' for a savepoint)", cmd)
}
