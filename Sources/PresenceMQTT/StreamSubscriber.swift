import Foundation
import Logging
import Synchronization

/// A subscribe-only MQTT 3.1.1 connection over plain TCP that reads its socket in large chunks and
/// hands out every message one read held, together (one `MQTTMessageBlock`): for topics whose
/// messages come one per sighting by the ten thousand a second (foreign nodes), where libmosquitto's
/// reading (a system call for each packet's first byte, its length and its body, and a select
/// between packets) would cost more than deciding them. QoS 0, a clean session (nothing is kept
/// while away), keep-alive pings, and reconnects with backoff up to `reconnectDelayMax`. Not for
/// TLS: `MQTTClient` serves a broker that needs it.
public final class StreamSubscriber: Sendable {
    private let broker: MQTTBroker
    private let clientID: String
    private let filters: [String]
    private let keepAlive: UInt16
    private let reconnectDelayMax: Double
    private let logger: Logger
    private let onMessages: @Sendable (MQTTMessageBlock) -> Void
    private let state = Mutex(State())

    private struct State {
        var stopping = false
        var running = false
        var connected = false
        var socket: Int32 = -1
    }

    /// Why a connection ended.
    private struct ConnectionError: Error, CustomStringConvertible {
        let description: String
    }

    /// A subscriber of `filters` on `broker` (plain TCP) as `clientID`; `onMessages` runs on the
    /// subscriber's own thread with the messages of each read, in order.
    public init(broker: MQTTBroker, clientID: String, filters: [String], keepAlive: UInt16 = 30, reconnectDelayMax: Double = 5,
                logger: Logger, onMessages: @escaping @Sendable (MQTTMessageBlock) -> Void) throws(MQTTError) {
        guard !broker.url.tls else {
            throw MQTTError(message: "a stream subscriber reads plain TCP only, not the TLS broker \(broker)")
        }
        guard !filters.isEmpty, (1 ... 65_535).contains(clientID.utf8.count) else {
            throw MQTTError(message: "a stream subscriber needs filters and a client id of 1 to 65535 bytes")
        }
        self.broker = broker
        self.clientID = clientID
        self.filters = filters
        self.keepAlive = max(keepAlive, 2)
        self.reconnectDelayMax = reconnectDelayMax
        self.logger = logger
        self.onMessages = onMessages
    }

    /// Whether the subscriptions are in place on a live connection.
    public var isConnected: Bool {
        state.withLock { $0.connected }
    }

    /// Starts the subscriber's thread, which connects and reconnects until `stop()`.
    public func start() {
        let starting = state.withLock { state -> Bool in
            guard !state.running, !state.stopping else { return false }
            state.running = true
            return true
        }
        guard starting else { return }
        let thread = Thread { [self] in
            run()
            state.withLock { $0.running = false }
        }
        thread.name = "mqtt-stream"
        thread.start()
    }

    /// Closes the connection (with a DISCONNECT) and waits, up to 5 s, for the thread to end.
    public func stop() async {
        state.withLock { state in
            state.stopping = true
            // Under the lock: the thread closes the socket only after taking it back under it, so
            // this cannot reach a descriptor number reused by something else.
            if state.socket >= 0 { _ = shutdown(state.socket, Int32(SHUT_RD)) }
        }
        for _ in 0 ..< 250 where state.withLock({ $0.running }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    private func run() {
        var delay = 0.1
        while !stopping {
            do {
                try session()
                delay = 0.1
            } catch {
                if !stopping {
                    logger.warning("MQTT stream connection lost; reconnecting", metadata: [
                        "mqtt.broker": "\(broker)", "mqtt.client": "\(clientID)", "error": "\(error)", "retry_s": "\(delay)",
                    ])
                }
            }
            state.withLock { $0.connected = false }
            let until = Date().addingTimeInterval(delay)
            while !stopping, Date() < until { usleep(50_000) }
            delay = min(delay * 2, reconnectDelayMax)
        }
    }

    /// One connection, from connect to its end.
    private func session() throws {
        let socket = try connectSocket()
        let registered = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.socket = socket
            return true
        }
        defer {
            state.withLock { $0.socket = -1 }
            close(socket)
        }
        guard registered else { return }
        let url = broker.url
        try send(MQTTWire.connect(clientID: clientID, username: url.username, password: url.password, keepAlive: keepAlive), on: socket)
        var stream = MQTTPacketStream()
        var buffer = [UInt8](repeating: 0, count: 1 << 18)
        var lastSent = Date()
        var lastHeard = Date()
        var acknowledged = false
        while !stopping {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 200)
            if ready < 0, errno != EINTR { throw ConnectionError(description: "poll failed: errno \(errno)") }
            if ready > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count == 0 {
                    if stopping { break }
                    throw ConnectionError(description: "the broker closed the connection")
                }
                if count < 0 {
                    guard errno == EINTR || errno == EAGAIN else { throw ConnectionError(description: "recv failed: errno \(errno)") }
                    continue
                }
                lastHeard = Date()
                buffer.withUnsafeBytes { stream.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                var messages = MQTTMessageBlock()
                while let packet = try stream.next() {
                    switch packet.type {
                    case 2:
                        guard packet.body.count >= 2, packet.body.last == 0 else {
                            throw ConnectionError(description: "the broker refused the connection (CONNACK return code \(packet.body.last.map(String.init) ?? "?"))")
                        }
                        try send(MQTTWire.subscribe(filters, id: 1), on: socket)
                        lastSent = Date()
                    case 3:
                        let publish = try MQTTPacketStream.publish(packet)
                        messages.append(topic: publish.topic, payload: publish.payload)
                        if let id = publish.id, publish.qos == 1 { try send(MQTTPacketStream.publishAcknowledgement(id), on: socket) }
                    case 9:
                        let refused = packet.body.dropFirst(2).filter { $0 == 0x80 }.count
                        if refused > 0 {
                            logger.error("the broker refused MQTT stream subscriptions", metadata: ["mqtt.client": "\(clientID)", "refused": "\(refused)"])
                        }
                        acknowledged = true
                        state.withLock { $0.connected = true }
                    default:
                        break
                    }
                }
                if !messages.isEmpty { onMessages(messages) }
                // A busy stream is read at most about every 8 ms, so that each read takes many
                // messages. On loopback, every read that drains the socket sends the broker an ACK
                // whose processing (the broker's next segments included) runs in this call: fewer,
                // larger reads cost both processes less (measured: docs/benchmarks.md).
                if count < buffer.count { usleep(8_000) }
            }
            let now = Date()
            if now.timeIntervalSince(lastHeard) > Double(keepAlive) * 1.5 {
                throw ConnectionError(description: acknowledged ? "nothing from the broker for \(Double(keepAlive) * 1.5) s" : "no CONNACK or SUBACK in time")
            }
            if now.timeIntervalSince(lastSent) >= Double(keepAlive) / 2 {
                try send(MQTTWire.pingRequest, on: socket)
                lastSent = now
            }
        }
        try? send(MQTTWire.disconnect, on: socket)
    }

    /// A connected TCP socket to the broker (each of its addresses tried in turn, 5 s each).
    private func connectSocket() throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let host = broker.url.host.hasPrefix("[") ? String(broker.url.host.dropFirst().dropLast()) : broker.url.host
        let rc = getaddrinfo(host, String(broker.url.port), &hints, &found)
        guard rc == 0, let first = found else {
            throw ConnectionError(description: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        var last = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let socket = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard socket >= 0 else { continue }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            _ = setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var on: Int32 = 1
            _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            if connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return socket }
            last = "connect failed: errno \(errno)"
            close(socket)
        }
        throw ConnectionError(description: "cannot connect to \(broker): \(last)")
    }

    private func send(_ bytes: [UInt8], on socket: Int32) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { raw in raw.baseAddress.map { Glibc.send(socket, $0 + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) } ?? -1 }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw ConnectionError(description: "send failed: errno \(errno)") }
            sent += count
        }
    }
}
