import Testing
@testable import PresenceCore

/// An event's id is its content's hash: the same event has the same id in every version, so an
/// event published again after an upgrade (from the journal, or by `replay`) keeps it.
@Suite struct EventIDTests {
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"

    @Test func idsStayWhatTheyWere() {
        // Pinned from the implementation before this one, which hashed the text it made.
        #expect(EventID.make(kind: .enter, user: "alice", device: Self.tag, beacon: "booth-a", at: 1_763_774_735_050, entered: nil)
            == "734b0c18-1c0f-8c3b-8a70-02c4c4799784")
        #expect(EventID.make(kind: .exit, user: "alice", device: Self.tag, beacon: "booth-a", at: 1_763_774_790_000, entered: 1_763_774_735_050)
            == "5f601d45-46b7-8cc8-b0f0-1d3cac6c6457")
        #expect(EventID.make(kind: .exit, user: "bob", device: "mac:00:11:22:33:44:55", beacon: "zone:hall-b", at: -5, entered: .min)
            == "e24c51ef-c093-8278-8863-d37f98151865")
        #expect(EventID.make(kind: .enter, user: "ünïcode", device: "espresense:irk:x", beacon: "b", at: 0, entered: nil)
            == "f3a61e6e-6e46-8d8c-bb94-47291c331dc6")
        #expect(EventID.make(kind: .enter, user: "u", device: "d", beacon: "b", at: .max, entered: 9_999_999_999_999_999)
            == "219b5a37-c4c1-81f5-8ea7-39a72b7a3638")
    }

    @Test func aZonesIdIsItsPlaceSpelledWithItsPrefix() {
        #expect(EventID.make(kind: .exit, user: "bob", device: "mac:00:11:22:33:44:55", placePrefix: "zone:", place: "hall-b", at: -5, entered: .min)
            == "e24c51ef-c093-8278-8863-d37f98151865")
        #expect(ZoneEvent(kind: .exit, user: "bob", device: "mac:00:11:22:33:44:55", zone: "hall-b", venue: nil, beacon: "b", at: -5, entered: .min,
                          reason: .moved).id == "e24c51ef-c093-8278-8863-d37f98151865")
    }
}
