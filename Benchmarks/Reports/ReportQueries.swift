/// The report queries timed, as an analyst (or `presencectl report`) runs them, over data that
/// ends at today's midnight (UTC).
struct ReportQuery {
    let name: String
    let sql: String

    static let today = "date_trunc('day', now())"

    static let all: [ReportQuery] = [
        ReportQuery(name: "dwell, all beacons, last 7 days", sql: "SELECT * FROM presence.dwell(now() - INTERVAL '7 days')"),
        ReportQuery(name: "dwell, one beacon, last 30 days",
                    sql: "SELECT * FROM presence.dwell(now() - INTERVAL '30 days') WHERE beacon_key = 'booth-2-7'"),
        ReportQuery(name: "dwell_v, all time (whole table)", sql: "SELECT * FROM presence.dwell_v"),
        ReportQuery(name: "hourly, all beacons, yesterday",
                    sql: "SELECT * FROM presence.visits_hourly(\(today) - INTERVAL '1 day', \(today))"),
        ReportQuery(name: "hourly, one beacon, last 7 days",
                    sql: "SELECT * FROM presence.visits_hourly(now() - INTERVAL '7 days') WHERE beacon_key = 'booth-2-7'"),
        ReportQuery(name: "daily, all beacons, last 30 days", sql: "SELECT * FROM presence.visits_daily(now() - INTERVAL '30 days')"),
        ReportQuery(name: "daily, one venue, all time (visits_daily_v)",
                    sql: "SELECT * FROM presence.visits_daily_v WHERE venue_key = 'venue-3'"),
        ReportQuery(name: "who was where, yesterday 14:00",
                    sql: "SELECT * FROM presence.who_was_where(\(today) - INTERVAL '10 hours')"),
        ReportQuery(name: "who was where, 60 days ago, one venue",
                    sql: "SELECT * FROM presence.who_was_where(\(today) - INTERVAL '60 days' + INTERVAL '11 hours') WHERE venue_key = 'venue-1'"),
        ReportQuery(name: "paths, one user, all time (user_paths_v)", sql: "SELECT * FROM presence.user_paths_v WHERE user_key = 'user-17'"),
        ReportQuery(name: "paths, all users, yesterday",
                    sql: "SELECT * FROM presence.user_paths(\(today) - INTERVAL '1 day', \(today))"),
        ReportQuery(name: "busiest, all venues, last 7 days", sql: "SELECT * FROM presence.busiest(now() - INTERVAL '7 days')"),
        ReportQuery(name: "busiest, one venue, last 30 days, top 10",
                    sql: "SELECT * FROM presence.busiest(now() - INTERVAL '30 days', venue => 'venue-2') ORDER BY peak_users DESC, mean_users DESC LIMIT 10"),
    ]
}
