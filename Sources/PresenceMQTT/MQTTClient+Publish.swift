import CMosquitto
import Synchronization

extension MQTTClient {
    /// Publishes one message. QoS 0 returns once libmosquitto has it; it throws if libmosquitto
    /// refuses it while disconnected, and is lost without an error if a connection attempt under
    /// way fails. QoS 1 and 2 wait for a slot in the `maxInFlight` window, then for
    /// the broker's acknowledgement, through disconnects and reconnects: libmosquitto keeps the
    /// message queued and sends it again, so it is never published twice from here.
    /// Throws `CancellationError` if the task is cancelled while waiting (the message may still be
    /// delivered), and `MQTTError` if the broker rejects it or the client stops.
    public func publish(_ message: MQTTMessage) async throws {
        try await send(message, duringStop: false)
    }

    /// Hands a QoS 0 message to libmosquitto and returns at once; it is lost, without an error,
    /// if the connection drops before it is written. Throws for another QoS, a bad message, or
    /// while disconnected or stopped.
    public func publishWithoutAcknowledgement(_ message: MQTTMessage) throws(MQTTError) {
        guard message.qos == 0 else {
            throw MQTTError(message: "publishWithoutAcknowledgement takes QoS 0 only, not \(message.qos), for \(message.topic)")
        }
        try Self.validate(message)
        try sendQoS0(message, duringStop: false)
    }

    func send(_ message: MQTTMessage, duringStop: Bool) async throws {
        try Task.checkCancellation()
        try Self.validate(message)
        if message.qos == 0 {
            try sendQoS0(message, duringStop: duringStop)
            return
        }
        let mid = try await handToLibrary(message, duringStop: duringStop)
        let reason = try await acknowledgement(of: mid)
        guard reason < 0x80 else { throw MQTTError.puback(reason, topic: message.topic) }
        state.withLock { $0.statistics.published += 1 }
    }

    private func sendQoS0(_ message: MQTTMessage, duringStop: Bool) throws(MQTTError) {
        let epoch = try state.withLock { state throws(MQTTError) in
            if let refusal = state.refusal(duringStop: duringStop) { throw refusal }
            return state.tracker.epoch
        }
        var mid: Int32 = 0
        let rc = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, 0, message.retain)
        }
        try check(rc, "QoS 0 message to \(message.topic) not sent")
        state.withLock { state in
            state.tracker.registerUnwaited(mid: mid, qos: 0, epoch: epoch)
            state.statistics.published += 1
        }
    }

    /// Waits for a free slot in the window; slots go to waiters in arrival order.
    private func acquireSlot(duringStop: Bool) async throws {
        enum Outcome { case granted, refused(MQTTError), queued }
        let immediate = state.withLock { state -> Outcome in
            if let refusal = state.refusal(duringStop: duringStop) { return .refused(refusal) }
            return state.tracker.tryAcquire() ? .granted : .queued
        }
        switch immediate {
        case .granted: return
        case .refused(let error): throw error
        case .queued: break
        }
        let id = state.withLock { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: SlotWaiter) in
                let outcome = state.withLock { state -> Outcome in
                    if let refusal = state.refusal(duringStop: duringStop) { return .refused(refusal) }
                    if state.tracker.tryAcquire() { return .granted }
                    state.tracker.enqueue(id: id, continuation)
                    return .queued
                }
                switch outcome {
                case .granted: continuation.resume()
                case .refused(let error): continuation.resume(throwing: error)
                case .queued: if Task.isCancelled { cancelSlotWait(id) }
                }
            }
        } onCancel: {
            cancelSlotWait(id)
        }
    }

    private func cancelSlotWait(_ id: UInt64) {
        state.withLock { $0.tracker.cancelSlotWait(id: id) }?.resume(throwing: CancellationError())
    }

    /// Publishes with QoS 1 or 2 without waiting for the acknowledgement: waits only for a slot
    /// in the `maxInFlight` window (slots go to callers in call order, so one task's messages
    /// leave in the order it sends them), hands the message to libmosquitto and returns. `handler`
    /// is called once, on libmosquitto's network thread or before `send` returns, with the broker's
    /// reason code (below 0x80: accepted; 0 for MQTT 3.1.1), or with the error that ended the wait
    /// (the client stopped). It must not block. Throws `CancellationError` if cancelled while
    /// waiting for a slot (nothing was sent), and `MQTTError` if the message cannot be sent.
    public func send(_ message: MQTTMessage, whenAcknowledged handler: @escaping @Sendable (Result<Int32, MQTTError>) -> Void) async throws {
        try Task.checkCancellation()
        try Self.validate(message)
        guard message.qos > 0 else {
            throw MQTTError(message: "send(_:whenAcknowledged:) takes QoS 1 or 2, not 0, for \(message.topic)")
        }
        let mid = try await handToLibrary(message, duringStop: false)
        let counted: @Sendable (Result<Int32, MQTTError>) -> Void = { [weak self] result in
            if case .success(let reason) = result, reason < 0x80 { self?.state.withLock { $0.statistics.published += 1 } }
            handler(result)
        }
        switch registerAcknowledgement(of: mid, .handler(counted)) {
        case .failure(let error): counted(.failure(error))
        case .success(.acknowledged(let reason, let handoff)):
            handoff?.resume()
            counted(.success(reason))
        case .success(.waiting): break
        }
    }

    /// Takes a window slot, hands `message` to libmosquitto and returns its message id.
    private func handToLibrary(_ message: MQTTMessage, duringStop: Bool) async throws -> Int32 {
        try await acquireSlot(duringStop: duringStop)
        var mid: Int32 = 0
        let rc = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &mid, message.topic, Int32(bytes.count), bytes.baseAddress,
                              Int32(message.qos), message.retain)
        }
        // NO_CONN: queued all the same, and sent after the reconnect.
        guard rc == MOSQ_ERR_SUCCESS.rawValue || rc == MOSQ_ERR_NO_CONN.rawValue else {
            state.withLock { $0.tracker.releaseSlot() }?.resume()
            throw MQTTError("cannot publish to \(message.topic)", rc: rc)
        }
        return mid
    }

    /// Registers who waits for `mid`, unless the client has stopped or its network thread died.
    private func registerAcknowledgement(of mid: Int32, _ waiter: AckWaiter) -> Result<Tracker.Registration, MQTTError> {
        state.withLock { state in
            // Only a finished stop or a dead network thread: while stopping, acks still come.
            if let failure = state.failure { return .failure(failure) }
            if state.phase == .stopped { return .failure(.stopped) }
            return .success(state.tracker.register(mid: mid, waiter))
        }
    }

    /// The reason code of the acknowledgement for `mid` (0 for MQTT 3.1.1).
    private func acknowledgement(of mid: Int32) async throws -> Int32 {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
                switch registerAcknowledgement(of: mid, .task(continuation)) {
                case .failure(let error):
                    continuation.resume(throwing: error)
                case .success(.acknowledged(let reason, let handoff)):
                    handoff?.resume()
                    continuation.resume(returning: reason)
                case .success(.waiting):
                    if Task.isCancelled { cancelAcknowledgementWait(mid) }
                }
            }
        } onCancel: {
            cancelAcknowledgementWait(mid)
        }
    }

    private func cancelAcknowledgementWait(_ mid: Int32) {
        let waiter = state.withLock { state in
            state.tracker.cancelAck(mid: mid) { if case .task = $0 { true } else { false } }
        }
        if case .task(let continuation) = waiter { continuation.resume(throwing: CancellationError()) }
    }
}
