import Logging
import Synchronization

/// Says in the log how many inbound messages the decision loop's inbox dropped (it counts them,
/// for `presence_inbound_dropped_total`): the first drop at once, then at most one line every
/// `interval` with the total, so that a flood cannot flood the log.
final class InboundDrops: Sendable {
    let interval: Duration
    private let logger: Logger
    private let said = Mutex<(total: Int, at: ContinuousClock.Instant)?>(nil)

    init(logger: Logger, interval: Duration = .seconds(10)) {
        self.logger = logger
        self.interval = interval
    }

    /// The inbox dropped messages, `total` of them so far.
    func dropped(total: Int, at now: ContinuousClock.Instant = .now) {
        let due = said.withLock { said -> Bool in
            if let last = said, now - last.at < interval || total <= last.total { return false }
            said = (total, now)
            return true
        }
        guard due else { return }
        logger.warning("no room for inbound messages in the decision loop's inbox; dropping them", metadata: ["dropped": "\(total)"])
    }
}
