import CMosquitto
import Logging
import Synchronization

/// libmosquitto's callbacks. They all run on its network thread, with its callback lock held:
/// they copy what they need, update `state` briefly, never block, never call `mosquitto_loop*`,
/// and resume continuations only after unlocking.
extension MQTTClient {
    /// Routes every callback to this object through the userdata pointer libmosquitto passes back
    /// (no global table of instances). Unretained: on the network thread, `start()` holds a
    /// reference until the thread is joined; the library's log messages from a caller's thread
    /// come while that caller holds one; `deinit` clears the pointer first.
    func installCallbacks() {
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_v5_callback_set(handle) { _, context, rc, _, _ in
            MQTTClient.from(context)?.connected(rc: rc)
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, context, rc, _ in
            MQTTClient.from(context)?.disconnected(rc: rc)
        }
        mosquitto_publish_v5_callback_set(handle) { _, context, mid, reason, _ in
            MQTTClient.from(context)?.published(mid: mid, reason: reason)
        }
        mosquitto_subscribe_v5_callback_set(handle) { _, context, mid, count, granted, _ in
            let codes = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(max(0, count)))) } ?? []
            MQTTClient.from(context)?.subscribed(mid: mid, granted: codes)
        }
        mosquitto_message_v5_callback_set(handle) { _, context, message, _ in
            guard let message = message?.pointee else { return }
            MQTTClient.from(context)?.received(message)
        }
        mosquitto_log_callback_set(handle) { _, context, level, text in
            guard let text else { return }
            MQTTClient.from(context)?.libraryLog(level: level, text)
        }
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MQTTClient? {
        context.map { Unmanaged<MQTTClient>.fromOpaque($0).takeUnretainedValue() }
    }

    private func connected(rc: Int32) {
        guard rc == 0 else {
            let refusal = MQTTError.connack(rc, version: configuration.protocolVersion)
            state.withLock { $0.lastRefusal = refusal }
            logger.error("broker refused the connection", metadata: ["error": "\(refusal)"])
            return
        }
        let (subscriptions, birth, epoch) = state.withLock { state in
            state.connected = true
            state.lastRefusal = nil
            state.statistics.connects += 1
            return (state.subscriptions, state.birth, state.tracker.epoch)
        }
        logger.info("connected to the MQTT broker")

        // Subscribe here, so that every reconnect restores them (a clean session forgets them).
        // SUBACKs cannot arrive before this callback returns, so the ids are recorded in time.
        var pending: Set<Int32> = []
        for subscription in subscriptions {
            var mid: Int32 = 0
            let rc = mosquitto_subscribe(handle, &mid, subscription.filter, Int32(subscription.qos))
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                pending.insert(mid)
            } else {
                logger.error("subscribe failed", metadata: [
                    "filter": "\(subscription.filter)", "error": "\(MQTTError("subscribe", rc: rc))",
                ])
            }
        }
        if let birth {
            var mid: Int32 = 0
            let rc = birth.payload.withUnsafeBytes { bytes in
                mosquitto_publish(handle, &mid, birth.topic, Int32(bytes.count), bytes.baseAddress,
                                  Int32(birth.qos), birth.retain)
            }
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                state.withLock { $0.tracker.registerUnwaited(mid: mid, qos: birth.qos, epoch: epoch) }
            } else {
                logger.error("birth message not published", metadata: [
                    "topic": "\(birth.topic)", "error": "\(MQTTError("publish", rc: rc))",
                ])
            }
        }
        let waiters = state.withLock { state in
            state.pendingSubacks = pending
            return state.ready ? state.drainConnectWaiters() : []
        }
        waiters.forEach { $0.resume() }
    }

    private func subscribed(mid: Int32, granted: [Int32]) {
        if granted.contains(where: { $0 >= 0x80 }) {
            logger.error("broker refused a subscription", metadata: ["granted": "\(granted)"])
        }
        let waiters = state.withLock { state in
            guard state.pendingSubacks.remove(mid) != nil, state.ready else { return [CheckedContinuation<Void, any Error>]() }
            return state.drainConnectWaiters()
        }
        waiters.forEach { $0.resume() }
    }

    /// libmosquitto's network thread ends after these return codes (`mosquitto_loop_forever`),
    /// so the client will never reconnect. 2.0.11 maps a refused MQTT 5 CONNACK to
    /// `MOSQ_ERR_PROTOCOL`, one of them.
    private static let fatal: Set<Int32> = Set([
        MOSQ_ERR_NOMEM, MOSQ_ERR_PROTOCOL, MOSQ_ERR_INVAL, MOSQ_ERR_NOT_FOUND, MOSQ_ERR_TLS,
        MOSQ_ERR_PAYLOAD_SIZE, MOSQ_ERR_NOT_SUPPORTED, MOSQ_ERR_AUTH, MOSQ_ERR_ACL_DENIED,
        MOSQ_ERR_UNKNOWN, MOSQ_ERR_EAI, MOSQ_ERR_PROXY,
    ].map(\.rawValue))

    private func disconnected(rc: Int32) {
        // Below 0x80: a libmosquitto error code; from 0x80: the reason of a broker's DISCONNECT.
        let error = rc < 0x80
            ? MQTTError("connection lost", rc: rc)
            : MQTTError(code: rc, message: "broker closed the connection: \(cText(mosquitto_reason_string(rc)))")
        let (wasConnected, failure, waiters, restart) = state.withLock { state in
            let wasConnected = state.connected
            state.connected = false
            state.pendingSubacks = []
            state.tracker.connectionEnded()
            if wasConnected { state.statistics.disconnects += 1 }
            guard Self.fatal.contains(rc), state.phase == .running else {
                // A broker's DISCONNECT ends libmosquitto's network thread (MQTT 5 only).
                return (wasConnected, nil as MQTTError?, nil as ClientState.Waiters?, rc >= 0x80 && state.phase == .running)
            }
            let cause = state.lastRefusal ?? error
            let failure = MQTTError(code: cause.code, message: "\(cause.message); libmosquitto stopped its network thread, the client will not reconnect")
            state.failure = failure
            return (wasConnected, failure, state.drainWaiters(), false)
        }
        if restart { restartAfterBrokerDisconnect() }
        if let failure {
            logger.critical("MQTT client cannot reconnect", metadata: ["error": "\(failure)"])
            waiters?.fail(with: failure)
        } else if rc == 0 {
            logger.info("disconnected from the MQTT broker")
        } else if wasConnected {
            logger.warning("MQTT connection lost; reconnecting", metadata: ["error": "\(error)"])
        } else {
            logger.debug("MQTT connection attempt failed", metadata: ["error": "\(error)"])
        }
    }

    private func published(mid: Int32, reason: Int32) {
        let (waiter, handoff) = state.withLock { $0.tracker.completed(mid: mid, reason: reason) }
        handoff?.resume()
        waiter?.resume(returning: reason)
    }

    private func received(_ message: mosquitto_message) {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        let count = Int(max(0, message.payloadlen))
        let payload = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
        let inbound = MQTTMessage(topic: topic, payload: payload, qos: Int(message.qos), retain: message.retain)
        let cost = inbound.queuedSize
        // Counted before it is handed on: whoever reads the message finds it counted.
        state.withLock { $0.statistics.received += 1 }
        // A handler keeps its own queue and counts what it drops; only the client's inbox is counted here.
        if let handler = configuration.onMessage {
            handler(inbound)
            return
        }
        let kept = inboxGauge.reserve(cost)
        if kept, case .dropped = inbox.yield(inbound) { inboxGauge.release(cost) }
        guard !kept else { return }
        let dropped = state.withLock { state -> Int in
            state.statistics.droppedInbound += 1
            state.statistics.droppedInboundBytes += cost
            return state.statistics.droppedInbound
        }
        // Logged at the 1st, 10th, 100th... drop: a flood cannot flood the log.
        if Self.isPowerOfTen(dropped) {
            logger.warning("no room for inbound messages; dropping them", metadata: [
                "dropped": "\(dropped)",
            ])
        }
    }

    private static func isPowerOfTen(_ number: Int) -> Bool {
        var rest = number
        while rest >= 10 && rest % 10 == 0 { rest /= 10 }
        return rest == 1
    }

    private func libraryLog(level: Int32, _ text: UnsafePointer<CChar>) {
        let level: Logger.Level = switch level {
        case MOSQ_LOG_ERR, MOSQ_LOG_WARNING: .warning
        case MOSQ_LOG_NOTICE, MOSQ_LOG_INFO: .debug
        default: .trace
        }
        guard logger.logLevel <= level else { return }
        logger.log(level: level, "libmosquitto", metadata: ["message": "\(String(cString: text))"])
    }
}
