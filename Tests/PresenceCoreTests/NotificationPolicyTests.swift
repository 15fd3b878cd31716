import Testing
@testable import PresenceCore

@Suite struct NotificationPolicyTests {
    let registry = Registry(
        beacons: [.init(key: "booth-1", name: "Booth One", hello: "Welcome {name} to {beacon}!", goodbye: "Bye {user}"), .init(key: "quiet")],
        users: [.init(key: "alice", name: "Alice")])

    func enter(_ beacon: String, at time: Int64) -> PresenceEvent {
        PresenceEvent(kind: .enter, id: "e\(time)", user: "alice", device: "d", beacon: beacon, venue: nil, at: time)
    }

    func exit(_ beacon: String, at time: Int64, _ reason: PresenceEvent.ExitReason = .timeout) -> PresenceEvent {
        PresenceEvent(kind: .exit, id: "x\(time)", user: "alice", device: "d", beacon: beacon, venue: nil, at: time, entered: time - 1, reason: reason)
    }

    @Test func greetsOnceAndSaysGoodbyeOncePerCooldown() {
        var policy = NotificationPolicy(cooldown: 3_600_000)
        var sent: [PresenceNotification] = []
        // Pacing at the edge of the booth: in and out every minute for half an hour.
        for minute in 0 ..< 30 {
            let t = Int64(minute) * 60_000
            sent += policy.notifications(for: [enter("booth-1", at: t), exit("booth-1", at: t + 30_000)], registry: registry)
        }
        #expect(sent.map(\.kind) == [.hello, .goodbye])
        #expect(sent.first?.message == "Welcome Alice to Booth One!")
        #expect(sent.last?.message == "Bye alice")
        #expect(sent.first?.at == 0 && sent.last?.at == 30_000)
        // After the cool-down she is greeted again.
        #expect(policy.notifications(for: [enter("booth-1", at: 3_600_000)], registry: registry).map(\.kind) == [.hello])
    }

    @Test func noMessageWithoutTextOrForIncognitoAndRemovedExits() {
        var policy = NotificationPolicy()
        #expect(policy.notifications(for: [enter("quiet", at: 0), exit("quiet", at: 5)], registry: registry).isEmpty)
        #expect(policy.notifications(for: [exit("booth-1", at: 5, .incognito), exit("booth-1", at: 6, .removed)], registry: registry).isEmpty)
    }

    @Test func remembersWhatWasSentBeforeARestart() {
        let before = PresenceNotification(user: "alice", beacon: "booth-1", kind: .hello, message: "hi", at: 1_000)
        var policy = NotificationPolicy(cooldown: 3_600_000, sent: [before])
        #expect(policy.notifications(for: [enter("booth-1", at: 60_000)], registry: registry).isEmpty)
    }
}
