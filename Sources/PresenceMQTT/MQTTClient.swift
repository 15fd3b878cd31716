import CMosquitto
import Logging
import Synchronization

import class Foundation.Thread

/// One connection to a broker through libmosquitto's own network thread: connects and reconnects
/// in the background, re-subscribes and re-publishes the birth message on every connect, delivers
/// inbound messages as `messages`, and publishes with QoS 1 acknowledgements awaited. Once
/// started, a client lives until `stop()` (the network thread holds it), so always stop it.
///
/// `@unchecked Sendable` because it holds a `struct mosquitto *`, which Swift cannot check: in
/// threaded mode (`mosquitto_loop_start`) libmosquitto locks its own state, so its calls may come
/// from any thread; the handle is destroyed only in `deinit`, after the network thread has been
/// joined; every Swift-side mutable value lives in the `state` Mutex.
public final class MQTTClient: @unchecked Sendable {
    let handle: OpaquePointer
    let configuration: MQTTConfiguration
    let logger: Logger
    let state: Mutex<ClientState>
    let inbox: AsyncStream<MQTTMessage>.Continuation
    let inboxGauge: InboxGauge
    /// Inbound messages, in arrival order; one consumer; ends after `stop()`.
    public let messages: MQTTMessages

    /// Creates the client and its libmosquitto handle; connects only at `start()`.
    public init(configuration: MQTTConfiguration, logger: Logger) throws(MQTTError) {
        try configuration.validate()
        handle = try Self.makeHandle(configuration)
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "mqtt.broker"] = "\(configuration.url)"
        logger[metadataKey: "mqtt.client"] = "\(configuration.clientID)"
        self.logger = logger
        state = Mutex(ClientState(subscriptions: configuration.subscriptions, birth: configuration.birth, maxInFlight: configuration.maxInFlight))
        // Unbounded as a stream: the gauge bounds what waits in it, by bytes.
        let (stream, continuation) = AsyncStream.makeStream(of: MQTTMessage.self, bufferingPolicy: .unbounded)
        inbox = continuation
        inboxGauge = InboxGauge(limit: configuration.inboxBytes)
        messages = MQTTMessages(stream: stream, gauge: inboxGauge)
        installCallbacks()
    }

    deinit {
        mosquitto_user_data_set(handle, nil)
        mosquitto_destroy(handle)
    }

    /// Starts libmosquitto's network thread and the first connection attempt, and returns at once;
    /// a broker that is down is retried in the background. Calling it again does nothing.
    public func start() throws(MQTTError) {
        let phase = state.withLock { state in
            let phase = state.phase
            if phase == .idle { state.phase = .running }
            return phase
        }
        switch phase {
        case .idle: break
        case .running: return
        case .stopping, .stopped: throw MQTTError.stopped
        }
        // The network thread calls back into this object until `mosquitto_loop_stop` returns:
        // keep it alive until then; `stop()` balances this.
        let retained = Unmanaged.passRetained(self)
        // The loop thread must run before connect_async, or a failed first attempt is never retried.
        do {
            try check(mosquitto_loop_start(handle), "cannot start the MQTT network thread")
        } catch {
            retained.release()
            state.withLock { $0.phase = .stopped }
            inbox.finish()
            throw error
        }
        let url = configuration.url
        let rc = mosquitto_connect_async(handle, url.host, Int32(url.port), Int32(configuration.keepAlive))
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            logger.warning("connection attempt failed; retrying", metadata: ["error": "\(MQTTError("connect", rc: rc))"])
            retryFirstConnect()
        }
    }

    /// Whether the client has a connection the broker accepted.
    public var isConnected: Bool {
        state.withLock { $0.connected }
    }

    /// Counters since the client was created.
    public var statistics: MQTTStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.inboxBytes = inboxGauge.waiting
            statistics.inFlight = state.tracker.inFlight
            statistics.peakInFlight = state.tracker.peakInFlight
            return statistics
        }
    }

    /// Returns once connected and the subscriptions made at connect are acknowledged. Throws
    /// `CancellationError` if the task is cancelled, and `MQTTError` once the client is stopped or
    /// its network thread has given up.
    public func waitUntilConnected() async throws {
        let id = state.withLock { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, MQTTError>? = state.withLock { state in
                    if let refusal = state.refusal() { return .failure(refusal) }
                    if state.ready { return .success(()) }
                    state.connectWaiters[id] = continuation
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome.mapError { $0 })
                } else if Task.isCancelled {
                    cancelConnectWait(id)
                }
            }
        } onCancel: {
            cancelConnectWait(id)
        }
    }

    private func cancelConnectWait(_ id: UInt64) {
        let waiter = state.withLock { $0.connectWaiters.removeValue(forKey: id) }
        waiter?.resume(throwing: CancellationError())
    }

    /// Replaces the message published on every connect (nil: none), for example a retained status
    /// that changed; it does not publish it now.
    public func setBirth(_ message: MQTTMessage?) throws(MQTTError) {
        if let message { try Self.validate(message) }
        state.withLock { $0.birth = message }
    }

    /// Subscribes now if connected, and on every later connect.
    public func subscribe(_ subscription: MQTTSubscription) throws(MQTTError) {
        try Self.validate(subscription)
        let connected = try state.withLock { state throws(MQTTError) in
            if let refusal = state.refusal() { throw refusal }
            state.remember(subscription)
            return state.connected
        }
        guard connected else { return }
        let rc = mosquitto_subscribe(handle, nil, subscription.filter, Int32(subscription.qos))
        if rc != MOSQ_ERR_SUCCESS.rawValue && rc != MOSQ_ERR_NO_CONN.rawValue {
            throw MQTTError("cannot subscribe to \(subscription.filter)", rc: rc)
        }
    }

    /// Unsubscribes from `filter` now if connected, and subscribes to it no more on later connects
    /// (a persistent session keeps its subscriptions: one a program no longer wants must be undone).
    public func unsubscribe(_ filter: String) throws(MQTTError) {
        let connected = try state.withLock { state throws(MQTTError) in
            if let refusal = state.refusal() { throw refusal }
            state.subscriptions.removeAll { $0.filter == filter }
            return state.connected
        }
        guard connected else { return }
        let rc = mosquitto_unsubscribe(handle, nil, filter)
        if rc != MOSQ_ERR_SUCCESS.rawValue && rc != MOSQ_ERR_NO_CONN.rawValue {
            throw MQTTError("cannot unsubscribe from \(filter)", rc: rc)
        }
    }

    /// Publishes `final` (if any) with at least QoS 1 and waits up to about 5 s for its
    /// acknowledgement, disconnects cleanly (so the broker does not publish the will), stops the
    /// network thread, ends `messages` and fails every pending `publish` with `MQTTError`.
    /// Safe to call more than once and from several tasks; every call returns once stopped.
    /// While the broker is unreachable this can take up to the retry policy's longest wait more: libmosquitto
    /// sleeps between attempts and cannot be woken. Must not be called from a libmosquitto callback.
    public func stop(publishing final: MQTTMessage? = nil) async {
        let phase = state.withLock { state in
            let phase = state.phase
            switch phase {
            case .idle: state.phase = .stopped
            case .running: state.phase = .stopping
            case .stopping, .stopped: break
            }
            return phase
        }
        switch phase {
        case .idle:
            finishStopping()
        case .running:
            await waitForFirstConnectRetries()
            if let final { await publishFinal(final) }
            let rc = mosquitto_disconnect(handle)
            if rc != MOSQ_ERR_SUCCESS.rawValue && rc != MOSQ_ERR_NO_CONN.rawValue {
                logger.warning("disconnect failed", metadata: ["error": "\(MQTTError("disconnect", rc: rc))"])
            }
            await joinNetworkThread()
            finishStopping()
            Unmanaged.passUnretained(self).release()
        case .stopping, .stopped:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state in
                    guard state.phase == .stopped else {
                        state.stopWaiters.append(continuation)
                        return false
                    }
                    return true
                }
                if done { continuation.resume() }
            }
        }
    }

    private func publishFinal(_ final: MQTTMessage) async {
        let message = MQTTMessage(topic: final.topic, payload: final.payload, qos: max(1, final.qos), retain: final.retain)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await self.send(message, duringStop: true)
                } catch is CancellationError {
                    self.logger.warning("final message not acknowledged within 5 s", metadata: ["topic": "\(message.topic)"])
                } catch {
                    self.logger.warning("final message not acknowledged", metadata: [
                        "topic": "\(message.topic)", "error": "\(error)",
                    ])
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(5))
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// `mosquitto_loop_stop` blocks until the network thread ends, which can take up to
    /// the retry policy's longest wait while it sleeps between attempts: keep it off Swift's cooperative pool.
    private func joinNetworkThread() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                _ = mosquitto_loop_stop(self.handle, false)
                continuation.resume()
            }
        }
    }

    private func finishStopping() {
        let (waiters, stopWaiters) = state.withLock { state in
            state.phase = .stopped
            state.connected = false
            let stopWaiters = state.stopWaiters
            state.stopWaiters = []
            return (state.drainWaiters(), stopWaiters)
        }
        inbox.finish()
        waiters.fail(with: .stopped)
        stopWaiters.forEach { $0.resume() }
        logger.info("MQTT client stopped")
    }
}
