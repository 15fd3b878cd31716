import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PresenceCore
import ServiceLifecycle
import Synchronization

/// A subscribe-only MQTT 3.1.1 connection read through swift-nio, over plain TCP or TLS, as a
/// `Service`: it connects, subscribes and reconnects under its `RetryPolicy` (the count started
/// again once a connection held) until the service group shuts down, when it says DISCONNECT. Each
/// read's messages are handed out together (one `MQTTMessageBlock`), on swift-nio's event loop:
/// for topics whose messages come by the ten thousand a second (foreign nodes' one per sighting)
/// and for the nodes' batches. A filter the broker refuses is logged once, naming it and the
/// broker's answer, shows in `status` until granted, and is asked again under the retry policy.
public final class MQTTInboundConnection: Service, Sendable {
    /// Where to connect, as whom, and what to subscribe to.
    public struct Configuration: Sendable {
        public var broker: MQTTBroker
        /// 1 to 65535 bytes; with `cleanSession` false, the broker keeps the session under it.
        public var clientID: String
        /// QoS 0 or 1 each.
        public var subscriptions: [MQTTSubscription]
        /// A fresh session on every connect (nothing kept while away); false keeps it, with the
        /// QoS 1 messages that came meanwhile.
        public var cleanSession = true
        /// Pings when nothing was sent for half of it; the broker is given up after 1.5 of it in silence.
        public var keepAlive: Duration = .seconds(30)
        public var retry = RetryPolicy()
        /// The longest packet accepted; a longer one drops the connection.
        public var maximumPacketLength = 4 << 20 + 65_536

        public init(broker: MQTTBroker, clientID: String, subscriptions: [MQTTSubscription]) {
            self.broker = broker
            self.clientID = clientID
            self.subscriptions = subscriptions
        }
    }

    /// The bytes one read asks the socket for at most.
    static let readSize = 1 << 18

    private let configuration: Configuration
    private let login: MQTTInboundHandler.Login
    private let tls: NIOSSLContext?
    private let serverHostname: String?
    private let group: any EventLoopGroup
    private let logger: Logger
    private let onMessages: @Sendable (MQTTMessageBlock) -> Void
    private let shared: Shared

    /// A connection as `configuration` says; `onMessages` runs on swift-nio's event loop with the
    /// messages of each read, in order, and must not block; so does `onConnected`, with true once
    /// a connection is subscribed (every filter answered) and false when that connection is lost,
    /// in order with the messages, but not when the connection stops. Throws, naming it, a value
    /// MQTT 3.1.1 or TLS would refuse: an empty or over-long client id, no subscriptions, a password
    /// without a user name, an unreadable CA, certificate or key file.
    public init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger,
                onConnected: @escaping @Sendable (Bool) -> Void = { _ in }, onMessages: @escaping @Sendable (MQTTMessageBlock) -> Void) throws(MQTTError) {
        func bad(_ what: String) -> MQTTError { MQTTError(message: "invalid inbound MQTT connection: \(what)") }
        let url = configuration.broker.url
        guard (1 ... 65_535).contains(configuration.clientID.utf8.count) else { throw bad("the client id must be 1 to 65535 bytes") }
        guard !configuration.subscriptions.isEmpty else { throw bad("no subscriptions") }
        guard configuration.subscriptions.allSatisfy({ (0 ... 1).contains($0.qos) && !$0.filter.isEmpty }) else {
            throw bad("every subscription needs a filter and QoS 0 or 1")
        }
        guard url.password == nil || url.username != nil else { throw bad("a password needs a user name (MQTT 3.1.1)") }
        guard configuration.keepAlive >= .seconds(1), configuration.keepAlive <= .seconds(65_535) else {
            throw bad("keep-alive \(configuration.keepAlive) is not in 1...65535 seconds")
        }
        let broker = configuration.broker
        guard url.tls || (broker.caFile == nil && broker.certFile == nil) else { throw bad("CA and certificate files need an mqtts:// broker") }
        guard (broker.certFile == nil) == (broker.keyFile == nil) else { throw bad("a client certificate needs its key, and a key its certificate") }
        self.configuration = configuration
        login = MQTTInboundHandler.Login(clientID: configuration.clientID, username: url.username, password: url.password,
                                         keepAliveSeconds: UInt16(configuration.keepAlive.components.seconds), cleanSession: configuration.cleanSession)
        if url.tls {
            do {
                var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
                tlsConfiguration.minimumTLSVersion = .tlsv12
                if let caFile = broker.caFile { tlsConfiguration.trustRoots = .file(caFile) }
                if let certFile = broker.certFile, let keyFile = broker.keyFile {
                    tlsConfiguration.certificateChain = try NIOSSLCertificate.fromPEMFile(certFile).map { .certificate($0) }
                    tlsConfiguration.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
                }
                tls = try NIOSSLContext(configuration: tlsConfiguration)
            } catch {
                throw MQTTError(message: "cannot set up TLS for \(url) with CA file \(broker.caFile ?? "(the system's)"): \(error)")
            }
            // A host given as an address is checked against the certificate's IP names, without SNI.
            serverHostname = (try? SocketAddress(ipAddress: url.host, port: 0)) == nil ? url.host : nil
        } else {
            tls = nil
            serverHostname = nil
        }
        self.group = group
        self.logger = logger
        self.onMessages = onMessages
        shared = Shared(onConnected: onConnected)
    }

    /// Where the connection stands now.
    public var status: MQTTInboundStatus {
        shared.status
    }

    /// Connected, with every subscription granted.
    public var isSubscribed: Bool {
        shared.status.isSubscribed
    }

    /// Returns once connected with every filter answered, or once the connection stops or the
    /// calling task is cancelled.
    public func waitUntilConnected() async {
        await shared.waitUntilConnected()
    }

    public func run() async throws {
        var attempts = RetryPolicy.Attempts(configuration.retry)
        await withTaskCancellationOrGracefulShutdownHandler {
            while !shared.isStopping {
                do {
                    let channel = try await connect()
                    if !shared.adopt(channel) { channel.triggerUserOutboundEvent(MQTTInboundHandler.Stop(), promise: nil) }
                    try? await channel.closeFuture.get()
                } catch {
                    shared.lost("cannot connect to \(configuration.broker): \(error)")
                }
                let (problem, held) = shared.ended()
                guard !shared.isStopping else { break }
                let delay = attempts.failed(held: held)
                logger.warning("MQTT inbound connection lost; reconnecting", metadata: [
                    "mqtt.broker": "\(configuration.broker)", "mqtt.client": "\(configuration.clientID)",
                    "error": "\(problem ?? "the broker closed the connection")", "retry_s": "\(delay)",
                ])
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: delay) }
            }
        } onCancelOrGracefulShutdown: { [shared] in
            shared.stop()
        }
        logger.info("MQTT inbound connection stopped", metadata: ["mqtt.client": "\(configuration.clientID)"])
    }

    private func connect() async throws -> any Channel {
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Self.readSize))
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(MQTTReadPacing(readSize: Self.readSize))
                    if let tls { try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname)) }
                    let machine = MQTTConnectionStateMachine(subscriptions: configuration.subscriptions, keepAlive: configuration.keepAlive,
                                                             retry: configuration.retry)
                    try pipeline.addHandler(MQTTInboundHandler(machine: machine, decoder: MQTTPacketDecoder(maximumLength: configuration.maximumPacketLength),
                                                               login: login, shared: shared, logger: logger,
                                                               onMessages: onMessages))
                }
            }
        return try await bootstrap.connect(host: configuration.broker.url.host, port: configuration.broker.url.port).get()
    }

    /// What the service and its channel's handler share: the status, the channel, why it ended.
    final class Shared: Sendable {
        private struct State {
            var status = MQTTInboundStatus()
            /// The refusals said in the log, kept across connections: each is said once, and once
            /// more when granted.
            var said: [String: UInt8] = [:]
            var channel: (any Channel)?
            var stopping = false
            var problem: String?
            var connectedSince: ContinuousClock.Instant?
            var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
            var lastWaiter = 0
        }

        private let state = Mutex(State())
        private let onConnected: @Sendable (Bool) -> Void

        init(onConnected: @escaping @Sendable (Bool) -> Void = { _ in }) {
            self.onConnected = onConnected
        }

        var status: MQTTInboundStatus { state.withLock { $0.status } }
        var isStopping: Bool { state.withLock { $0.stopping } }

        /// The handler's machine says where the subscriptions stand; returns the refusals not said
        /// before, and the filters refused before and granted now, to say. A connection subscribed
        /// or lost (unless stopping) is told to `onConnected`.
        @discardableResult
        func update(_ status: MQTTInboundStatus) -> (refused: [MQTTRefusal], granted: [String]) {
            var told: Bool?
            defer { if let told { onConnected(told) } }
            let (changes, waiters) = state.withLock { state -> ((refused: [MQTTRefusal], granted: [String]), [CheckedContinuation<Void, Never>]) in
                if status.connected != state.status.connected, !state.stopping { told = status.connected }
                state.status = status
                guard status.connected else { return (([], []), []) }
                if state.connectedSince == nil { state.connectedSince = .now }
                let refused = status.refused.filter { state.said[$0.filter] != $0.code }
                let granted = state.said.keys.filter { filter in !status.refused.contains { $0.filter == filter } }.sorted()
                state.said = Dictionary(status.refused.map { ($0.filter, $0.code) }, uniquingKeysWith: { first, _ in first })
                defer { state.waiters = [:] }
                return ((refused, granted), Array(state.waiters.values))
            }
            waiters.forEach { $0.resume() }
            return changes
        }

        func waitUntilConnected() async {
            let id = state.withLock { state in
                state.lastWaiter += 1
                return state.lastWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let done = state.withLock { state in
                        guard !state.status.connected, !state.stopping, !Task.isCancelled else { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if done { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }

        /// Why the connection is ending (the first reason given counts).
        func lost(_ problem: String) {
            state.withLock { state in
                if state.problem == nil { state.problem = problem }
            }
        }

        /// Keeps the new channel, so that `stop` can reach it; false when stopping already.
        func adopt(_ channel: any Channel) -> Bool {
            state.withLock { state in
                state.channel = channel
                return !state.stopping
            }
        }

        /// The connection ended: why, and how long it was subscribed (nil: never).
        func ended() -> (problem: String?, held: Duration?) {
            state.withLock { state in
                defer {
                    state = State(said: state.said, stopping: state.stopping, waiters: state.waiters, lastWaiter: state.lastWaiter)
                }
                return (state.problem, state.connectedSince.map { .now - $0 })
            }
        }

        /// Asks the channel, if any, to say DISCONNECT and close; no new one is opened.
        func stop() {
            let (channel, waiters) = state.withLock { state in
                state.stopping = true
                defer { state.waiters = [:] }
                return (state.channel, Array(state.waiters.values))
            }
            waiters.forEach { $0.resume() }
            channel?.triggerUserOutboundEvent(MQTTInboundHandler.Stop(), promise: nil)
        }
    }
}
