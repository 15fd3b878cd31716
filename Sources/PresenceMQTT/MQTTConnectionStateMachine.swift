import PresenceCore

/// The life of one inbound MQTT 3.1.1 connection, as a value (postgres-nio's
/// `ConnectionStateMachine` is the model): what the channel saw and the clock go in, each event
/// returns the one action the channel carries out. CONNECT once the socket (and TLS) is up,
/// SUBSCRIBE once CONNACK accepts, each filter's SUBACK answer kept (a refused filter is asked again
/// under the retry policy, so that an ACL put right is picked up without a reconnect),
/// keep-alive pings, and the end: nothing heard for 1.5 keep-alives, a refused connection, a broken
/// stream, or a stop (DISCONNECT). No I/O and no clock of its own: times are given.
struct MQTTConnectionStateMachine {
    typealias Instant = ContinuousClock.Instant

    enum State {
        /// The socket (and TLS) is not up yet.
        case connecting
        /// CONNECT sent at `since`.
        case awaitingConnack(since: Instant)
        case connected(Session)
        /// Ended by the machine (a DISCONNECT or a close asked for); the channel closes.
        case closing
        case closed
    }

    /// What a connection the broker accepted keeps.
    struct Session {
        var lastSent: Instant
        var lastHeard: Instant
        /// The SUBSCRIBE awaiting its SUBACK: its id and the indices of its filters.
        var pending: (id: UInt16, filters: [Int])?
        /// Whether every filter has had an answer once.
        var answered = false
        /// The refused filters, by index, with the broker's answer.
        var refused: [Int: UInt8] = [:]
        /// When the refused filters are asked again.
        var resubscribeAt: Instant?
        var refusals: RetryPolicy.Attempts
        var lastID: UInt16 = 1
    }

    /// What to write.
    enum Packet: Equatable {
        case connect
        case subscribe(id: UInt16, [MQTTSubscription])
        case pingRequest
        case publishAcknowledgement(UInt16)
        case disconnect
    }

    /// What the channel does after an event.
    enum Action: Equatable {
        case none
        case send(Packet)
        /// A SUBACK was read (the first of the connection, or an answer to a filter asked again):
        /// `status` tells where the subscriptions stand.
        case answered(first: Bool)
        /// Write DISCONNECT, then close: the owner stops.
        case disconnect
        /// Close at once, for `reason` (nil: the connection was not up yet and the owner stops).
        case close(reason: String?)
    }

    let subscriptions: [MQTTSubscription]
    let keepAlive: Duration
    let retry: RetryPolicy
    private(set) var state = State.connecting

    init(subscriptions: [MQTTSubscription], keepAlive: Duration, retry: RetryPolicy) {
        self.subscriptions = subscriptions
        self.keepAlive = keepAlive
        self.retry = retry
    }

    /// The socket (and TLS) is up: send CONNECT.
    mutating func channelActive(at now: Instant) -> Action {
        guard case .connecting = state else { return fail("the channel became active twice") }
        state = .awaitingConnack(since: now)
        return .send(.connect)
    }

    /// CONNACK with `returnCode` (0: accepted): subscribe to every filter, or close.
    mutating func connack(returnCode: UInt8, at now: Instant) -> Action {
        guard case .awaitingConnack = state else { return fail("a CONNACK came unasked") }
        guard returnCode == 0 else {
            return fail("the broker refused the connection (CONNACK return code \(returnCode): \(Self.connackText(returnCode)))")
        }
        var session = Session(lastSent: now, lastHeard: now, refusals: RetryPolicy.Attempts(retry))
        session.pending = (1, Array(subscriptions.indices))
        state = .connected(session)
        return .send(.subscribe(id: 1, subscriptions))
    }

    /// SUBACK `id` with one return code per filter of the SUBSCRIBE it answers (0x80: refused).
    mutating func suback(id: UInt16, codes: [UInt8], at now: Instant) -> Action {
        guard case .connected(var session) = state, let pending = session.pending, pending.id == id, pending.filters.count == codes.count else {
            return fail("a SUBACK answered no SUBSCRIBE of this connection")
        }
        state = .closing
        for (index, code) in zip(pending.filters, codes) {
            session.refused[index] = code >= 0x80 ? code : nil
        }
        let firstAnswer = !session.answered
        session.answered = true
        session.pending = nil
        if session.refused.isEmpty {
            session.refusals = RetryPolicy.Attempts(retry)
            session.resubscribeAt = nil
        } else {
            session.resubscribeAt = now + session.refusals.failed()
        }
        state = .connected(session)
        return .answered(first: firstAnswer)
    }

    /// A PUBLISH at `qos` (with `id` at QoS 1) was read: acknowledge it at QoS 1.
    func publish(qos: UInt8, id: UInt16?) -> Action {
        guard case .connected = state else {
            if case .closing = state { return .none }
            return .close(reason: "a PUBLISH came before the connection was accepted")
        }
        switch (qos, id) {
        case (0, _): return .none
        case (1, let id?): return .send(.publishAcknowledgement(id))
        default: return .close(reason: "a PUBLISH at QoS \(qos), above what was asked for")
        }
    }

    /// Bytes were read: the broker is alive.
    mutating func read(at now: Instant) {
        guard case .connected(var session) = state else { return }
        state = .closing
        session.lastHeard = now
        state = .connected(session)
    }

    /// The clock: ask refused filters again when due, ping when nothing was sent for half the
    /// keep-alive, and close when the broker said nothing for 1.5 keep-alives (or did not accept
    /// the connection within one).
    mutating func tick(at now: Instant) -> Action {
        switch state {
        case .awaitingConnack(let since):
            guard now - since > keepAlive else { return .none }
            return fail("no CONNACK within \(keepAlive)")
        case .connected(var session):
            if now - session.lastHeard > keepAlive * 3 / 2 {
                return fail("nothing from the broker for \(keepAlive * 3 / 2)")
            }
            state = .closing
            defer { state = .connected(session) }
            if session.pending == nil, let due = session.resubscribeAt, due <= now {
                let indices = session.refused.keys.sorted()
                session.lastID = session.lastID == UInt16.max ? 1 : session.lastID + 1
                session.pending = (session.lastID, indices)
                session.resubscribeAt = nil
                session.lastSent = now
                return .send(.subscribe(id: session.lastID, indices.map { subscriptions[$0] }))
            }
            if now - session.lastSent >= keepAlive / 2 {
                session.lastSent = now
                return .send(.pingRequest)
            }
            return .none
        case .connecting, .closing, .closed:
            return .none
        }
    }

    /// The stream broke (a malformed packet, an error of the socket or TLS): close.
    mutating func failed(_ reason: String) -> Action {
        switch state {
        case .closing, .closed: .none
        default: fail(reason)
        }
    }

    /// The owner stops: a DISCONNECT on a connection the broker accepted (or is accepting), else a close.
    mutating func stop() -> Action {
        switch state {
        case .connecting:
            state = .closing
            return .close(reason: nil)
        case .awaitingConnack, .connected:
            state = .closing
            return .disconnect
        case .closing, .closed:
            return .none
        }
    }

    /// The channel closed.
    mutating func closed() {
        state = .closed
    }

    /// Where the subscriptions stand.
    var status: MQTTInboundStatus {
        guard case .connected(let session) = state, session.answered else { return MQTTInboundStatus() }
        return MQTTInboundStatus(connected: true, refused: session.refused.keys.sorted().map {
            MQTTRefusal(filter: subscriptions[$0].filter, code: session.refused[$0] ?? 0x80)
        })
    }

    private mutating func fail(_ reason: String) -> Action {
        state = .closing
        return .close(reason: reason)
    }

    /// MQTT 3.1.1's words for a refused CONNACK.
    static func connackText(_ code: UInt8) -> String {
        switch code {
        case 1: "unacceptable protocol version"
        case 2: "client identifier rejected"
        case 3: "server unavailable"
        case 4: "bad user name or password"
        case 5: "not authorized"
        default: "unknown"
        }
    }
}
