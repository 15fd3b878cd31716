import NIOCore

/// Paces a connection's socket reads, first in its pipeline (before TLS): a read that did not fill
/// the buffer is followed by the next one only after `pause`, so that a busy stream is read in few,
/// large reads. On loopback each read that drains the socket costs the broker and this process an
/// ACK's processing (docs/benchmarks.md). It counts the bytes the socket gave, not what TLS makes of
/// them: TLS hands plaintext on a record at a time.
final class MQTTReadPacing: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let pause = TimeAmount.milliseconds(8)

    private let readSize: Int
    private var bytesThisRead = 0
    private var readPending = false
    private weak var context: ChannelHandlerContext?

    init(readSize: Int) {
        self.readSize = readSize
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytesThisRead += unwrapInboundIn(data).readableBytes
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        let full = bytesThisRead >= readSize
        bytesThisRead = 0
        guard !full else { return context.read() }
        guard !readPending else { return }
        readPending = true
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.pause) { [self] in
            readPending = false
            self.context?.read()
        }
    }
}
