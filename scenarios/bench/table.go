package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable renders rep as a table: one row per target and concurrency,
// with the overhead against the baseline (the target named direct, else
// the first), then every other target against the floor (when the run has
// one) with its goal met or missed, then process and memory figures.
func WriteTable(w io.Writer, rep *Report) error {
	fmt.Fprintf(w, "machine: %s; load at the end %s\nrounds: %d × %v per target per concurrency, targets alternating\n\n", rep.Machine, rep.LoadAtEnd, rep.Rounds, rep.Duration)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TARGET\tSESSIONS\tCALLS\tERRORS\tP50 ms\tP90 ms\tP99 ms\tREQ/S\tADDED P50\tREQ/S vs BASE\tP99 vs BASE\t")
	base := rep.Targets[0].Target.Name
	if find(rep, Direct) != nil {
		base = Direct
	}
	for _, tr := range rep.Targets {
		against := map[int]Overhead{}
		if tr.Target.Name != base {
			for _, o := range Against(rep, tr.Target.Name, base) {
				against[o.Sessions] = o
			}
		}
		for _, l := range tr.Latency {
			added, thr, p99 := "-", "-", "-"
			if o, ok := against[l.Sessions]; ok {
				added, thr, p99 = overheadCells(o)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.0f\t%s\t%s\t%s\t\n", tr.Target.Name, l.Sessions, l.Calls, l.Errors,
				l.P50Ms, l.P90Ms, l.P99Ms, l.ReqPerSec, added, thr, p99)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if find(rep, Floor) != nil {
		fmt.Fprintf(w, "\nagainst the floor (a plain reverse proxy in front of the same upstream):\n")
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "TARGET\tSESSIONS\tADDED P50 vs FLOOR\tREQ/S vs FLOOR\tP99 vs FLOOR\tGOAL\t")
		for _, j := range judgeAgainstFloor(rep) {
			added, thr, p99 := overheadCells(j.Overhead)
			goal := j.Goal
			if goal == "" {
				goal = "-"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", j.Target, j.Sessions, added, thr, p99, goal)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
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

func overheadCells(o Overhead) (added, thr, p99 string) {
	added, thr, p99 = fmt.Sprintf("%+.2f ms", o.AddedP50Ms), "-", "-"
	if o.ReqPerSecRatio > 0 {
		thr = fmt.Sprintf("%.0f%%", 100*o.ReqPerSecRatio)
	}
	if o.P99Ratio > 0 {
		p99 = fmt.Sprintf("%.2f×", o.P99Ratio)
	}
	return added, thr, p99
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
