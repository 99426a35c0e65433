package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is where a long command shows how far it got: bars on a terminal; in a log or a pipe,
// where a redrawn bar is a run of carriage returns, a plain line now and then instead.
type progress struct {
	w   io.Writer
	tty bool
}

// progressOn shows progress on w, with bars when w is a terminal.
func progressOn(w io.Writer) progress {
	f, ok := w.(*os.File)
	return progress{w: w, tty: ok && term.IsTerminal(int(f.Fd()))}
}

// bar is a bar of total units, drawn only on a terminal (elsewhere it counts and draws nothing).
func (p progress) bar(total int64, description string, opts ...progressbar.Option) *progressbar.ProgressBar {
	base := []progressbar.Option{
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetVisibility(p.tty),
		progressbar.OptionSetDescription(description),
		progressbar.OptionSetWidth(20), // with the counts, rate and ETA it fits 80 columns
		progressbar.OptionShowCount(),
		// An upload reads in 32 KB steps: a redraw for each would cost more than the reading.
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
	}
	if p.tty {
		// End the bar's line, so that what comes next starts on its own.
		base = append(base, progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }))
	}
	// A bar of 0 refuses every step; an empty total is a bar that Finish fills at once.
	return progressbar.NewOptions64(max(total, 1), append(base, opts...)...)
}

// endBar leaves bar full when its work is done, else where it stopped.
func endBar(bar *progressbar.ProgressBar, done bool) {
	switch {
	case done:
		_ = bar.Finish()
	case !bar.IsFinished():
		_ = bar.Exit()
	}
}

// line writes a progress line where there are no bars.
func (p progress) line(format string, args ...any) {
	if !p.tty {
		fmt.Fprintf(p.w, format+"\n", args...)
	}
}
