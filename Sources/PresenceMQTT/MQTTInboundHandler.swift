import Logging
import NIOCore

/// The channel handler of an inbound MQTT connection (postgres-nio's `PostgresChannelHandler` is
/// the model): it cuts packets out of what is read with `MQTTPacketDecoder`, feeds them and the
/// clock to an `MQTTConnectionStateMachine`, and carries out the actions it returns. The messages
/// of one read are handed on together, as one `MQTTMessageBlock`, and QoS 1 messages are
/// acknowledged once handed on. `MQTTReadPacing`, first in the pipeline, paces the reads.
final class MQTTInboundHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Asks the handler to say DISCONNECT and close (`Channel.triggerUserOutboundEvent`).
    struct Stop: Sendable {}

    /// What the connection says to the broker when it connects.
    struct Login: Sendable {
        var clientID: String
        var username: String?
        var password: String?
        var keepAliveSeconds: UInt16
        var cleanSession: Bool
    }

    static let tickInterval = TimeAmount.milliseconds(500)

    private var machine: MQTTConnectionStateMachine
    private var processor: NIOSingleStepByteToMessageProcessor<MQTTPacketDecoder>
    private let login: Login
    private let shared: MQTTInboundConnection.Shared
    private let onMessages: @Sendable (MQTTMessageBlock) -> Void
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var block = MQTTMessageBlock()
    private var acknowledgements: [UInt16] = []
    private var tick: Scheduled<Void>?

    init(machine: MQTTConnectionStateMachine, decoder: MQTTPacketDecoder, login: Login, shared: MQTTInboundConnection.Shared,
         logger: Logger, onMessages: @escaping @Sendable (MQTTMessageBlock) -> Void) {
        self.machine = machine
        self.processor = NIOSingleStepByteToMessageProcessor(decoder)
        self.login = login
        self.shared = shared
        self.logger = logger
        self.onMessages = onMessages
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { becameActive(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tick?.cancel()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        becameActive(context: context)
        context.fireChannelActive()
    }

    private func becameActive(context: ChannelHandlerContext) {
        guard case .connecting = machine.state else { return }
        run(machine.channelActive(at: .now), context: context)
        scheduleTick(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        tick?.cancel()
        machine.closed()
        shared.update(machine.status)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        machine.read(at: .now)
        do {
            try processor.process(buffer: buffer) { packet in try receive(packet, context: context) }
        } catch {
            run(machine.failed("the broker's stream is broken: \(error)"), context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !block.isEmpty {
            let messages = block
            block = MQTTMessageBlock()
            onMessages(messages)
        }
        if !acknowledgements.isEmpty {
            for id in acknowledgements { write(MQTTWire.publishAcknowledgement(id), context: context) }
            acknowledgements.removeAll(keepingCapacity: true)
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        run(machine.failed("\(error)"), context: context)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is Stop else { return context.triggerUserOutboundEvent(event, promise: promise) }
        run(machine.stop(), context: context)
        promise?.succeed()
    }

    private func receive(_ packet: MQTTPacket, context: ChannelHandlerContext) throws {
        switch packet.type {
        case 3:
            let publish = try packet.publish()
            switch machine.publish(qos: publish.qos, id: publish.id) {
            case .none:
                block.append(topic: publish.topic.readableBytesView, payload: publish.payload.readableBytesView)
            case .send(.publishAcknowledgement(let id)):
                block.append(topic: publish.topic.readableBytesView, payload: publish.payload.readableBytesView)
                acknowledgements.append(id)
            case let action:
                run(action, context: context)
            }
        case 2:
            run(machine.connack(returnCode: packet.body.getInteger(at: packet.body.readerIndex + 1) ?? 0xFF, at: .now), context: context)
        case 9:
            var body = packet.body
            guard let id = body.readInteger(as: UInt16.self) else { return run(machine.failed("an empty SUBACK"), context: context) }
            run(machine.suback(id: id, codes: Array(body.readableBytesView), at: .now), context: context)
        default:
            // PINGRESP (13), and what a subscriber is never sent: the read already counted as life.
            break
        }
    }

    private func scheduleTick(context: ChannelHandlerContext) {
        tick = context.eventLoop.assumeIsolated().scheduleTask(in: Self.tickInterval) { [self] in
            guard let context = self.context else { return }
            run(machine.tick(at: .now), context: context)
            scheduleTick(context: context)
        }
    }

    private func run(_ action: MQTTConnectionStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .send(let packet):
            write(bytes(of: packet), context: context)
            context.flush()
        case .answered(let first):
            let changes = shared.update(machine.status)
            for refusal in changes.refused {
                logger.error("\(refusal); readiness fails until it is granted", metadata: [
                    "mqtt.client": "\(login.clientID)", "mqtt.filter": "\(refusal.filter)",
                ])
            }
            for filter in changes.granted {
                logger.notice("the broker granted the subscription to \(filter) it had refused", metadata: ["mqtt.client": "\(login.clientID)"])
            }
            if first {
                logger.info("MQTT inbound connection subscribed", metadata: ["mqtt.client": "\(login.clientID)"])
            }
        case .disconnect:
            write(MQTTWire.disconnect, context: context)
            context.flush()
            context.close(promise: nil)
        case .close(let reason):
            if let reason { shared.lost(reason) }
            context.close(promise: nil)
        }
    }

    private func bytes(of packet: MQTTConnectionStateMachine.Packet) -> [UInt8] {
        switch packet {
        case .connect:
            MQTTWire.connect(clientID: login.clientID, username: login.username, password: login.password, keepAlive: login.keepAliveSeconds,
                             cleanSession: login.cleanSession)
        case .subscribe(let id, let subscriptions): MQTTWire.subscribe(subscriptions, id: id)
        case .pingRequest: MQTTWire.pingRequest
        case .publishAcknowledgement(let id): MQTTWire.publishAcknowledgement(id)
        case .disconnect: MQTTWire.disconnect
        }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }
}
