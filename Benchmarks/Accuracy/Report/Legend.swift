/// What every column of the table means, printed under it.
enum Legend {
    static let lines = [
        "Every method consumes the same observations (time, device, node, beacon, rssi, tx), matched from sightings by the registry as the aggregator does.",
        "acc % hist/live: time the method names the true beacon / time the truth names a beacon (simulator: dwell time only), to the ms, on the history and on the live timeline.",
        "lost % missed/late/early/gaps: the present time the history does not name the true beacon, as % of the present time, by where in its true stay it falls: stays never named at all, before the first moment a stay is named, after the last, and between (another beacon or nowhere); the four add up to 100 − acc hist.",
        "false % hist/live: time the method names any beacon / time the truth says nowhere (walking, away); – where the truth is never nowhere.",
        "history: sessions as the sessions table holds them, every method dated by the engine's rule: an enter or move to when its beacon began to lead (engine: event `at`; baselines: when the rule's own figure first put that beacon first, before margin, hold or votes), an exit for silence to the last sighting. live: when a subscriber learns of a change (engine: its tick, 1 s watermark after `at`, a timeout exit only when the timeout runs out; baselines: the tick they decide).",
        "trans made/true: enters on the live timeline (from nowhere or a move) / the truth's enters; ×true = their ratio.",
        "flaps/dev·h: returns to a beacon within \(Scorer.flapWindow / 1000) s of leaving it for another (A→B→A; A→nowhere→A is one stay) per device-hour.",
        "enter p50/p90: per true stay at B, from its start to the first live moment at B (an enter up to \(Scorer.earlyEnter / 1000) s early counts, negative); nearest-rank percentiles.",
        "exit p50/p90: per true stay that ends in a true exit (not the end of the recording), from its end to the end of the method's last live stay at B begun before it (negative: left early).",
        "stays: true stays; missed in: stays never live at B; missed out: entered stays still held at B when the method stopped (\(BenchRun.flush / 1000) s+ past the end) or when the next stay at B began.",
        "spurious: live enters that are not the first enter of a true stay at that beacon (moves to a wrong beacon, re-enters after a dropout, flaps); in brackets, those made while the truth says nowhere (a booth passed while walking).",
        "1st enter % nearest: of the enters from nowhere on the history timeline, the share that name the place nearest the person at the enter's time (simulations: by the person's position; datasets: by the truth, where it names a place).",
        "visits made/true: sessions on the history timeline that last the visit minimum (\(Scorer.visitDwell / 1000) s, as an expo sets `presence.settings.visit_min_dwell`), against the true stays that do; walk-bys that are counted as visits show as the excess.",
        "engine dwell: the same engine under `--decide dwell` (nearer by the switch margin for the switch dwell), the default before `--decide hmm`, shown when the engine row decides otherwise.",
        "truth (self-check): the truth replayed as a method; it must score 100 %, 0 s, nothing missed or spurious, or the run fails.",
        "Baselines: strongest = best 2 s mean RSSI, immediate; happy-bubbles = Happy Bubbles presence server's rule (last 30 sightings vote 1.5 + 0.75·(1 + rssi/100) for their beacon, 8 confirming 1 s ticks, nowhere after 45 s unheard); mean-margin = 5 s mean, another beacon 4 dB stronger for 3 s takes over, nowhere after 5 s unheard. A beacon's mean is its best node's.",
    ]
}
