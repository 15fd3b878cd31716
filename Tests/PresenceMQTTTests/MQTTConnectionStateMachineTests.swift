import PresenceCore
import Testing
@testable import PresenceMQTT

/// The inbound connection's state machine without I/O: each event, one line, and the action it returns.
@Suite struct MQTTConnectionStateMachineTests {
    typealias Machine = MQTTConnectionStateMachine
    static let start = ContinuousClock.now
    static let filters = [MQTTSubscription("espresense/devices/+/+", qos: 0), MQTTSubscription("espresense/rooms/+/status", qos: 0)]

    static func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    /// A machine whose CONNECT was accepted at 0 s and whose first SUBSCRIBE (id 1) is pending.
    static func accepted(keepAlive: Duration = .seconds(30)) -> Machine {
        var machine = Machine(subscriptions: filters, keepAlive: keepAlive, retry: RetryPolicy(first: .seconds(1), longest: .seconds(4)))
        _ = machine.channelActive(at: at(0))
        _ = machine.connack(returnCode: 0, at: at(0))
        return machine
    }

    @Test func aConnectionConnectsSubscribesAndIsSubscribed() {
        var machine = Machine(subscriptions: Self.filters, keepAlive: .seconds(30), retry: RetryPolicy())
        #expect(machine.status == MQTTInboundStatus())
        #expect(machine.channelActive(at: Self.at(0)) == .send(.connect))
        #expect(machine.connack(returnCode: 0, at: Self.at(0.1)) == .send(.subscribe(id: 1, Self.filters)))
        #expect(machine.status.connected == false, "not subscribed before the SUBACK")
        #expect(machine.suback(id: 1, codes: [0, 0], at: Self.at(0.2)) == .answered(first: true))
        #expect(machine.status == MQTTInboundStatus(connected: true) && machine.status.isSubscribed)
    }

    @Test func aRefusedConnectionClosesNamingTheBrokersAnswer() {
        var machine = Machine(subscriptions: Self.filters, keepAlive: .seconds(30), retry: RetryPolicy())
        _ = machine.channelActive(at: Self.at(0))
        #expect(machine.connack(returnCode: 5, at: Self.at(0.1)) == .close(reason: "the broker refused the connection (CONNACK return code 5: not authorized)"))
        #expect(machine.tick(at: Self.at(100)) == .none)
    }

    @Test func aRefusedFilterIsReportedAskedAgainUnderTheRetryPolicyAndRecovers() {
        var machine = Self.accepted()
        let refusal = MQTTRefusal(filter: "espresense/devices/+/+", code: 0x80)
        #expect(machine.suback(id: 1, codes: [0x80, 0], at: Self.at(0)) == .answered(first: true))
        #expect(machine.status == MQTTInboundStatus(connected: true, refused: [refusal]) && !machine.status.isSubscribed)
        #expect(machine.status.problem == "the broker refused the subscription to espresense/devices/+/+ (SUBACK return code 0x80: failure)")
        #expect(machine.tick(at: Self.at(0.9)) == .none, "the first retry waits 1 s")
        #expect(machine.tick(at: Self.at(1)) == .send(.subscribe(id: 2, [Self.filters[0]])), "only the refused filter")
        #expect(machine.suback(id: 2, codes: [0x80], at: Self.at(1.1)) == .answered(first: false))
        #expect(machine.status.refused == [refusal], "refused again")
        #expect(machine.tick(at: Self.at(3.0)) == .none, "the second retry waits 2 s")
        #expect(machine.tick(at: Self.at(3.1)) == .send(.subscribe(id: 3, [Self.filters[0]])))
        #expect(machine.suback(id: 3, codes: [0], at: Self.at(3.2)) == .answered(first: false))
        #expect(machine.status.isSubscribed)
        #expect(machine.tick(at: Self.at(14)) == .none, "granted: not asked again")
    }

    @Test func aSubackThatAnswersNothingAskedClosesTheConnection() {
        var wrongID = Self.accepted()
        #expect(wrongID.suback(id: 7, codes: [0, 0], at: Self.at(0)) == .close(reason: "a SUBACK answered no SUBSCRIBE of this connection"))
        var wrongCount = Self.accepted()
        #expect(wrongCount.suback(id: 1, codes: [0], at: Self.at(0)) == .close(reason: "a SUBACK answered no SUBSCRIBE of this connection"))
        var early = Machine(subscriptions: Self.filters, keepAlive: .seconds(30), retry: RetryPolicy())
        _ = early.channelActive(at: Self.at(0))
        #expect(early.suback(id: 1, codes: [0, 0], at: Self.at(0)) == .close(reason: "a SUBACK answered no SUBSCRIBE of this connection"))
    }

    @Test func publishesAreAcknowledgedAtQoS1AndRefusedBeforeTheConnectionIsAccepted() {
        let machine = Self.accepted()
        #expect(machine.publish(qos: 0, id: nil) == .none)
        #expect(machine.publish(qos: 1, id: 9) == .send(.publishAcknowledgement(9)))
        #expect(machine.publish(qos: 2, id: 9) == .close(reason: "a PUBLISH at QoS 2, above what was asked for"))
        var early = Machine(subscriptions: Self.filters, keepAlive: .seconds(30), retry: RetryPolicy())
        _ = early.channelActive(at: Self.at(0))
        #expect(early.publish(qos: 0, id: nil) == .close(reason: "a PUBLISH came before the connection was accepted"))
    }

    @Test func keepAlivePingsAtHalfAndGivesUpAfterOneAndAHalfInSilence() {
        var machine = Self.accepted(keepAlive: .seconds(10))
        _ = machine.suback(id: 1, codes: [0, 0], at: Self.at(0))
        #expect(machine.tick(at: Self.at(4.9)) == .none)
        #expect(machine.tick(at: Self.at(5)) == .send(.pingRequest))
        #expect(machine.tick(at: Self.at(6)) == .none, "pinged 1 s ago")
        machine.read(at: Self.at(5.1))
        #expect(machine.tick(at: Self.at(10)) == .send(.pingRequest))
        #expect(machine.tick(at: Self.at(20.1)) == .send(.pingRequest), "heard at 5.1 s: silent for 15 s at 20.1 s, not more")
        #expect(machine.tick(at: Self.at(20.2)) == .close(reason: "nothing from the broker for 15.0 seconds"))
        #expect(machine.status == MQTTInboundStatus(), "closing: not connected")
    }

    @Test func aConnackThatDoesNotComeWithinTheKeepAliveClosesTheConnection() {
        var machine = Machine(subscriptions: Self.filters, keepAlive: .seconds(10), retry: RetryPolicy())
        _ = machine.channelActive(at: Self.at(0))
        #expect(machine.tick(at: Self.at(10)) == .none)
        #expect(machine.tick(at: Self.at(10.1)) == .close(reason: "no CONNACK within 10.0 seconds"))
    }

    @Test func stoppingSaysDisconnectOnlyToABrokerThatListens() {
        var connected = Self.accepted()
        #expect(connected.stop() == .disconnect)
        #expect(connected.stop() == .none, "once")
        #expect(connected.tick(at: Self.at(100)) == .none)
        var connecting = Machine(subscriptions: Self.filters, keepAlive: .seconds(30), retry: RetryPolicy())
        #expect(connecting.stop() == .close(reason: nil))
        var broken = Self.accepted()
        #expect(broken.failed("the broker's stream is broken: a PUBLISH packet is malformed")
            == .close(reason: "the broker's stream is broken: a PUBLISH packet is malformed"))
        #expect(broken.failed("again") == .none && broken.stop() == .none)
        broken.closed()
        #expect(broken.status == MQTTInboundStatus())
    }

    @Test func eachRefusalIsSaidOnceAcrossReconnectsAndOnceMoreWhenGranted() {
        let shared = MQTTInboundConnection.Shared()
        let refusal = MQTTRefusal(filter: "espresense/devices/+/+", code: 0x80)
        #expect(shared.update(MQTTInboundStatus(connected: true, refused: [refusal])) == ([refusal], []))
        #expect(shared.update(MQTTInboundStatus(connected: true, refused: [refusal])) == ([], []), "asked again, refused again")
        _ = shared.ended()
        #expect(shared.update(MQTTInboundStatus()) == ([], []) && shared.status == MQTTInboundStatus())
        #expect(shared.update(MQTTInboundStatus(connected: true, refused: [refusal])) == ([], []), "a new connection, refused again")
        #expect(shared.update(MQTTInboundStatus(connected: true)) == ([], ["espresense/devices/+/+"]))
        #expect(shared.status.isSubscribed)
    }
}
