import PresenceCLI
import PresenceCore

/// One user's visits on one UTC day, in the order they began, as `presencectl report paths` prints them.
struct UserPath: Equatable {
    /// One visit of a path, as the query returns it (one row per visit, ordered by day, user, step).
    struct Step: Equatable {
        var user: String
        var day: String
        var beacon: String
        var entered: Int64
        /// nil while the user is still there.
        var exited: Int64?
    }

    var user: String
    var day: String
    var steps: [Step]

    /// Consecutive steps of the same user and day gathered into paths, in their order.
    static func grouped(_ steps: [Step]) -> [UserPath] {
        var paths: [UserPath] = []
        for step in steps {
            if let last = paths.last, last.user == step.user, last.day == step.day {
                paths[paths.count - 1].steps.append(step)
            } else {
                paths.append(UserPath(user: step.user, day: step.day, steps: [step]))
            }
        }
        return paths
    }

    /// `booth-1 10:00–10:12 → booth-3 10:12–` (UTC; an open end while the user is still there).
    var text: String {
        steps.map { step in
            "\(step.beacon) \(Self.clock(step.entered))–\(step.exited.map(Self.clock) ?? "")"
        }.joined(separator: " → ")
    }

    /// One JSON object: user, day, visits and the steps with their times in epoch milliseconds.
    var json: String {
        var w = JSONWriter()
        w.object { w in
            w.member("user", user)
            w.member("day", day)
            w.member("visits", steps.count)
            w.key("path")
            w.array { w in
                for step in steps {
                    w.object { w in
                        w.member("beacon", step.beacon)
                        w.member("entered", step.entered)
                        w.key("exited")
                        if let exited = step.exited { w.int(exited) } else { w.null() }
                    }
                }
            }
        }
        return String(decoding: w.bytes, as: UTF8.self) + "\n"
    }

    private static func clock(_ milliseconds: Int64) -> String {
        String(Timestamps.iso8601(milliseconds).dropFirst(11).prefix(5))
    }
}
