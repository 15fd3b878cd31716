/// Who waits for a QoS 1/2 message's acknowledgement: a `publish` caller suspended until its
/// reason code, or a `send` caller's handler, called with it (or with the error that ended the wait).
enum AckWaiter: Sendable {
    case task(CheckedContinuation<Int32, any Error>)
    case handler(@Sendable (Result<Int32, MQTTError>) -> Void)

    func resume(returning reason: Int32) {
        switch self {
        case .task(let continuation): continuation.resume(returning: reason)
        case .handler(let handler): handler(.success(reason))
        }
    }

    func resume(throwing error: MQTTError) {
        switch self {
        case .task(let continuation): continuation.resume(throwing: error)
        case .handler(let handler): handler(.failure(error))
        }
    }
}
/// A `publish` caller waiting for a slot in the in-flight window.
typealias SlotWaiter = CheckedContinuation<Void, any Error>
/// The tracker as the client uses it.
typealias Tracker = PublishTracker<AckWaiter, SlotWaiter>

/// Everything an `MQTTClient` shares between callers and libmosquitto's network thread; it lives
/// in one `Mutex`, and continuations taken out of it are resumed after unlocking.
struct ClientState {
    enum Phase {
        case idle
        case running
        case stopping
        case stopped
    }

    var phase = Phase.idle
    var connected = false
    /// Subscribe message ids sent on the current connection and not yet acknowledged.
    var pendingSubacks: Set<Int32> = []
    /// Set when libmosquitto's network thread gave up for good (for example a refused MQTT 5 CONNACK).
    var failure: MQTTError?
    /// The broker's last refusal of a connection attempt, cleared by a successful connect.
    var lastRefusal: MQTTError?
    var subscriptions: [MQTTSubscription]
    /// Published on every connect (see `MQTTClient.setBirth`).
    var birth: MQTTMessage?
    var tracker: Tracker
    /// A thread retries a first connection attempt that failed at once (see `retryFirstConnect`).
    var retryingFirstConnect = false
    var firstConnectRetriesEnded: CheckedContinuation<Void, Never>?
    var connectWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    var stopWaiters: [CheckedContinuation<Void, Never>] = []
    var statistics = MQTTStatistics()
    var nextID: UInt64 = 0

    init(subscriptions: [MQTTSubscription], birth: MQTTMessage?, maxInFlight: Int) {
        self.subscriptions = subscriptions
        self.birth = birth
        tracker = Tracker(limit: maxInFlight)
    }

    /// Connected, with the subscriptions made at connect acknowledged.
    var ready: Bool { connected && pendingSubacks.isEmpty }

    /// Why a new operation cannot proceed, if it cannot. The final message of `stop()` may still go
    /// out while stopping.
    func refusal(duringStop: Bool = false) -> MQTTError? {
        if let failure { return failure }
        switch phase {
        case .idle, .running: return nil
        case .stopping: return duringStop ? nil : .stopped
        case .stopped: return .stopped
        }
    }

    mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    /// Adds or replaces the subscription for the same filter.
    mutating func remember(_ subscription: MQTTSubscription) {
        if let index = subscriptions.firstIndex(where: { $0.filter == subscription.filter }) {
            subscriptions[index] = subscription
        } else {
            subscriptions.append(subscription)
        }
    }

    /// Ends every wait with `error`: the client stopped or its network thread ended.
    mutating func drainWaiters() -> Waiters {
        let (acks, slots) = tracker.drain()
        let connects = Array(connectWaiters.values)
        connectWaiters = [:]
        return Waiters(acks: acks, slots: slots, connects: connects)
    }

    /// Callers taken out of the state, to be resumed outside the lock.
    struct Waiters {
        var acks: [AckWaiter]
        var slots: [SlotWaiter]
        var connects: [CheckedContinuation<Void, any Error>]

        func fail(with error: MQTTError) {
            acks.forEach { $0.resume(throwing: error) }
            slots.forEach { $0.resume(throwing: error) }
            connects.forEach { $0.resume(throwing: error) }
        }
    }
}

extension ClientState {
    /// Takes every `waitUntilConnected` caller, to be resumed.
    mutating func drainConnectWaiters() -> [CheckedContinuation<Void, any Error>] {
        let waiters = Array(connectWaiters.values)
        connectWaiters = [:]
        return waiters
    }
}
