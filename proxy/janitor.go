package proxy

import (
	"context"
	"time"
)

// RecordPruneEvery is how often the proxy forgets session records (owners,
// tombstones) older than MCPCTL_SESSION_RECORD_TTL_MS: often enough that the
// table holds about one TTL of records, rarely enough to cost nothing.
const RecordPruneEvery = time.Hour

// janitor expires idle sessions (MCPCTL_SESSION_IDLE_MS, checked every
// quarter of it, at most every minute) and prunes expired session records,
// until ctx ends. It closes done when it returns.
func (p *Proxy) janitor(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(sweepEvery(p.knobs.SessionIdle))
	defer tick.Stop()
	lastPrune := time.Now() // Start pruned before serving
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p.entry.ExpireIdle(ctx)
		if time.Since(lastPrune) >= RecordPruneEvery {
			p.prune(ctx)
			lastPrune = time.Now()
		}
	}
}

func (p *Proxy) prune(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, p.knobs.AuditQueryTimeout)
	defer cancel()
	n, err := p.store.PruneSessions(pctx, time.Now().Add(-p.knobs.SessionRecordTTL))
	if err != nil {
		p.logger.Warn("pruning expired session records failed; will retry", "err", err)
		return
	}
	if n > 0 {
		p.logger.Info("forgot expired session records", "records", n, "ttl", p.knobs.SessionRecordTTL)
	}
}
