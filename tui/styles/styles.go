// Package styles holds every style of the TUI in one Styles struct, built
// by New for a light or dark background, with or without colour. There are
// no package-level style variables: a model keeps the Styles it was given.
package styles

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Styles are the TUI's styles.
type Styles struct {
	Header      lipgloss.Style // the top line
	HeaderState lipgloss.Style // stopped / running
	Failed      lipgloss.Style // failed run state, errors
	Pane        lipgloss.Style // an unfocused pane's border
	PaneFocused lipgloss.Style // the focused pane's border
	Title       lipgloss.Style // a pane's title
	TitleFocus  lipgloss.Style
	Tab         lipgloss.Style
	TabActive   lipgloss.Style
	Column      lipgloss.Style // table column headers
	Selected    lipgloss.Style // the selected row
	Match       lipgloss.Style // a line or row that matches the search
	Pinned      lipgloss.Style // where execution stopped
	Changed     lipgloss.Style // an entry changed by the last step
	Old         lipgloss.Style // its old value
	Dim         lipgloss.Style // secondary text
	Emitted     lipgloss.Style
	Output      lipgloss.Style
	Status      lipgloss.Style // the status line
	Prompt      lipgloss.Style // the command bar's prompt
	Overlay     lipgloss.Style // an overlay's box
	Caret       lipgloss.Style // the caret under a query error
	Bar         lipgloss.Style // bar chart bars
	HelpKey     lipgloss.Style
	HelpDesc    lipgloss.Style
}

// New builds the styles for a dark or light background. With noColor
// (NO_COLOR set) only bold, underline and reverse are used.
func New(isDark, noColor bool) Styles {
	ld := lipgloss.LightDark(isDark)
	c := func(light, dark string) color.Color {
		if noColor {
			return lipgloss.NoColor{}
		}
		return ld(lipgloss.Color(light), lipgloss.Color(dark))
	}
	accent := c("#5A3FC0", "#A68BFF")
	dim := c("#6C6C6C", "#8A8A8A")
	border := c("#BDBDBD", "#4A4A4A")
	green := c("#1B7F3B", "#5FD787")
	red := c("#B00020", "#FF6B6B")
	yellow := c("#8A6100", "#E5C07B")
	s := Styles{
		Header:      lipgloss.NewStyle().Bold(true).Foreground(accent),
		HeaderState: lipgloss.NewStyle().Bold(true).Foreground(green),
		Failed:      lipgloss.NewStyle().Bold(true).Foreground(red),
		Pane:        lipgloss.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(border),
		PaneFocused: lipgloss.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(accent),
		Title:       lipgloss.NewStyle().Foreground(dim),
		TitleFocus:  lipgloss.NewStyle().Bold(true).Foreground(accent),
		Tab:         lipgloss.NewStyle().Foreground(dim),
		TabActive:   lipgloss.NewStyle().Bold(true).Underline(true),
		Column:      lipgloss.NewStyle().Bold(true).Foreground(dim),
		Selected:    lipgloss.NewStyle().Reverse(true),
		Match:       lipgloss.NewStyle().Underline(true).Foreground(yellow),
		Pinned:      lipgloss.NewStyle().Bold(true).Foreground(red),
		Changed:     lipgloss.NewStyle().Bold(true).Foreground(yellow),
		Old:         lipgloss.NewStyle().Foreground(dim),
		Dim:         lipgloss.NewStyle().Foreground(dim),
		Emitted:     lipgloss.NewStyle().Foreground(accent),
		Output:      lipgloss.NewStyle().Foreground(green),
		Status:      lipgloss.NewStyle().Foreground(dim),
		Prompt:      lipgloss.NewStyle().Bold(true).Foreground(accent),
		Overlay:     lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		Caret:       lipgloss.NewStyle().Bold(true).Foreground(red),
		Bar:         lipgloss.NewStyle().Foreground(accent),
		HelpKey:     lipgloss.NewStyle().Bold(true),
		HelpDesc:    lipgloss.NewStyle().Foreground(dim),
	}
	if noColor {
		s.Changed = lipgloss.NewStyle().Bold(true).Underline(true)
		s.TitleFocus = lipgloss.NewStyle().Bold(true).Reverse(true)
		s.Match = lipgloss.NewStyle().Underline(true)
		s.Pinned = lipgloss.NewStyle().Bold(true)
	}
	return s
}
