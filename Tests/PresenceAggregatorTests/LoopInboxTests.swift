import PresenceCore
import PresenceMQTT
import Testing
@testable import PresenceAggregator

/// The decision loop's inbox as the loop drains it: what is waiting is taken without waiting,
/// questions first, then ticks, messages and grants in order; a full inbox drops and counts.
@Suite struct LoopInboxTests {
    static func topic(of item: LoopInbox.Item?) -> String {
        switch item {
        case .message(let message, _): message.topic
        case .messages(let messages, _): messages.messages.map(\.topic).joined(separator: "+")
        case .tick: "tick"
        case .question: "question"
        case .registry: "registry"
        case .grant: "grant"
        case .inbound(let up, _): up ? "way in back" : "way in down"
        case nil: "none"
        }
    }

    @Test func theWayInGoingDownAndBackComesInOrderWithTheMessagesAndIsNeverDropped() {
        // Room for "a" (66 bytes queued) but not for "b" as well.
        let inbox = LoopInbox(limit: 100)
        inbox.push(MQTTMessage(topic: "a", payload: [1], qos: 0), receivedAt: 1)
        inbox.inbound(up: false, at: 2)
        inbox.push(MQTTMessage(topic: "b", payload: Array(repeating: 0, count: 64), qos: 0), receivedAt: 3)
        inbox.inbound(up: true, at: 4)
        #expect((0 ..< 4).map { _ in Self.topic(of: inbox.nextIfReady()) } == ["a", "way in down", "way in back", "none"])
    }

    @Test func waitingItemsAreTakenInOrderWithoutWaitingAndQuestionsComeFirst() async {
        let inbox = LoopInbox(limit: 1 << 20)
        #expect(inbox.nextIfReady() == nil)
        inbox.push(MQTTMessage(topic: "a", payload: [1], qos: 0), receivedAt: 1)
        inbox.tick(at: 2)
        inbox.push(MQTTMessage(topic: "b", payload: [2], qos: 0), receivedAt: 3)
        inbox.ask { _ in }
        #expect((0 ..< 5).map { _ in Self.topic(of: inbox.nextIfReady()) } == ["question", "a", "tick", "b", "none"])
        inbox.push(MQTTMessage(topic: "c", payload: [3], qos: 0), receivedAt: 4)
        #expect(Self.topic(of: await inbox.next()) == "c")
        inbox.finish()
        #expect(await inbox.next() == nil)
    }

    @Test func aFullInboxDropsAndCounts() {
        let inbox = LoopInbox(limit: 200)
        var dropped: [Int?] = []
        for index in 0 ..< 10 { dropped.append(inbox.push(MQTTMessage(topic: "t\(index)", payload: Array(repeating: 0, count: 60), qos: 0), receivedAt: 0)) }
        #expect(dropped.prefix(1) == [nil] && dropped.last == .some(inbox.counters.dropped))
        #expect(inbox.counters.dropped > 0 && inbox.counters.waitingBytes <= 200)
    }

    @Test func aReadsMessagesAreOneItemTakenOrDroppedWhole() async {
        let inbox = LoopInbox(limit: 400)
        let read = MQTTMessageBlock((0 ..< 3).map { MQTTMessage(topic: "r\($0)", payload: [UInt8($0)], qos: 0) })
        #expect(inbox.push(MQTTMessageBlock(), receivedAt: 0) == nil)
        #expect(inbox.push(read, receivedAt: 1) == nil)
        inbox.push(MQTTMessage(topic: "a", payload: [1], qos: 0), receivedAt: 2)
        #expect(inbox.counters.waitingBytes == read.queuedSize + 66)
        // No room for all three: none is taken, and all three are counted.
        #expect(inbox.push(read, receivedAt: 3) == 3)
        #expect((0 ..< 3).map { _ in Self.topic(of: inbox.nextIfReady()) } == ["r0+r1+r2", "a", "none"])
        #expect(inbox.counters == LoopInbox.Counters(dropped: 3, droppedBytes: read.queuedSize, waitingBytes: 0))
        // A waiting reader is handed the read itself.
        async let taken = inbox.next()
        try? await Task.sleep(for: .milliseconds(50))
        inbox.push(read, receivedAt: 4)
        #expect(Self.topic(of: await taken) == "r0+r1+r2")
    }

    @Test func aGrantWaitsInOrderWithTheMessagesUntilTheLoopTakesIt() async {
        let inbox = LoopInbox(limit: 1 << 20)
        inbox.push(MQTTMessage(topic: "a", payload: [1], qos: 0), receivedAt: 1)
        async let taken = inbox.grant(ShardGrant(shards: ShardSet([2]), shared: true))
        try? await Task.sleep(for: .milliseconds(50))
        #expect(Self.topic(of: inbox.nextIfReady()) == "a")
        guard case .grant(let grant, let answer) = inbox.nextIfReady() else {
            Issue.record("no grant after the message")
            return
        }
        #expect(grant == ShardGrant(shards: ShardSet([2]), shared: true))
        answer.resume(returning: true)
        #expect(await taken)
    }

    @Test func aGrantTheLoopWillNotTakeIsRefused() async {
        let inbox = LoopInbox(limit: 1 << 20)
        async let left = inbox.grant(ShardGrant(shards: ShardSet([1])))
        try? await Task.sleep(for: .milliseconds(50))
        // The loop ended without taking it.
        inbox.finish()
        inbox.dropQuestions()
        #expect(await left == false)
        #expect(await inbox.grant(ShardGrant(shards: ShardSet([1]))) == false, "a finished inbox takes no grant")
    }
}
