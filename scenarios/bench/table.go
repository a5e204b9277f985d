package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable renders rep as a table: one row per target and concurrency,
// with the overhead against the first target (the baseline, usually the
// upstream called directly), then process and memory figures.
func WriteTable(w io.Writer, rep *Report) error {
	fmt.Fprintf(w, "machine: %s\nrounds: %d × %v per target per concurrency, targets alternating\n\n", rep.Machine, rep.Rounds, rep.Duration)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TARGET\tSESSIONS\tCALLS\tERRORS\tP50 ms\tP90 ms\tP99 ms\tREQ/S\tADDED P50\tREQ/S vs BASE\tP99 vs BASE\t")
	base := rep.Targets[0]
	for i, tr := range rep.Targets {
		for j, l := range tr.Latency {
			added, thr, p99 := "-", "-", "-"
			if i > 0 && j < len(base.Latency) {
				b := base.Latency[j]
				added = fmt.Sprintf("%+.2f ms", l.P50Ms-b.P50Ms)
				if b.ReqPerSec > 0 {
					thr = fmt.Sprintf("%.0f%%", 100*l.ReqPerSec/b.ReqPerSec)
				}
				if b.P99Ms > 0 {
					p99 = fmt.Sprintf("%.2f×", l.P99Ms/b.P99Ms)
				}
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.0f\t%s\t%s\t%s\t\n", tr.Target.Name, l.Sessions, l.Calls, l.Errors,
				l.P50Ms, l.P90Ms, l.P99Ms, l.ReqPerSec, added, thr, p99)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TARGET\tRSS BEFORE\tRSS AFTER\tGOROUTINES BEFORE\tGOROUTINES AFTER\t")
	for _, tr := range rep.Targets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", tr.Target.Name, size(tr.Before.RSSBytes), size(tr.After.RSSBytes),
			count(tr.Before.Goroutines), count(tr.After.Goroutines))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TARGET\tIDLE CLIENT\tSESSIONS\tHEAP/SESSION\tRSS/SESSION\tGOROUTINES/SESSION\t")
	for _, tr := range rep.Targets {
		for _, id := range tr.Idle {
			g := "n/a"
			if id.Opened > 0 && id.GoroutinesPerSession >= 0 {
				g = fmt.Sprintf("%.2f", id.GoroutinesPerSession)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s\t\n", tr.Target.Name, id.Kind, id.Opened, id.Sessions,
				perSession(id, id.HeapPerSession), perSession(id, id.RSSPerSession), g)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, tr := range rep.Targets {
		for _, l := range tr.Latency {
			if l.FirstError != "" {
				fmt.Fprintf(w, "%s at %d sessions: first error: %s\n", tr.Target.Name, l.Sessions, l.FirstError)
			}
		}
		for _, id := range tr.Idle {
			if id.FirstError != "" {
				fmt.Fprintf(w, "%s idle sessions (%s): stopped at %d: %s\n", tr.Target.Name, id.Kind, id.Opened, id.FirstError)
			}
		}
	}
	return nil
}

func perSession(id Idle, v int64) string {
	if id.Opened == 0 || v < 0 {
		return "n/a"
	}
	return size(v)
}

func size(b int64) string {
	switch {
	case b < 0:
		return "n/a"
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
}

func count(n int) string {
	if n < 0 {
		return "n/a"
	}
	return fmt.Sprint(n)
}
