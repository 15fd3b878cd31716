import Testing
@testable import PresenceCore

@Suite struct IdentityTests {
    @Test(arguments: [
        ("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:3", "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:3"),
        ("ibeacon:F7826DA6-4FA2-4E98-8024-BC5B71E0893E:002:0", "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:0"),
        ("altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2", "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2"),
        ("eddystone:EDD1EBEAC04E5DEFA017:0123456789AB", "eddystone:edd1ebeac04e5defa017:0123456789ab"),
        ("mac:C4:7C:8D:6A:2B:01", "mac:c4:7c:8d:6a:2b:01"),
        ("node:badge-17", "node:badge-17"),
    ])
    func canonicalises(_ input: String, _ canonical: String) throws {
        #expect(try Identity(parsing: input).text == canonical)
    }

    @Test(arguments: [
        ("ibeacon:1234:1:1", "1234"),
        ("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:70000:1", "70000"),
        ("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:-1", "-1"),
        ("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:2:3", "ibeacon:"),
        ("eddystone:edd1ebeac04e5defa017:0123", "0123"),
        ("mac:c4:7c:8d:6a:2b", "mac:c4:7c:8d:6a:2b"),
        ("mac:c4:7c:8d:6a:2b:zz", "zz"),
        ("node:Badge", "node:Badge"),
        ("uuid:1", "uuid:1"),
        ("", "''"),
    ])
    func refusesNamingTheValue(_ input: String, _ named: String) {
        do {
            _ = try Identity(parsing: input)
            Issue.record("accepted \(input)")
        } catch {
            #expect(error.message.contains(named), "\(error.message)")
        }
    }

    @Test func regionsOnlyWhenAllowed() throws {
        let region = "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2"
        #expect(throws: ValueError.self) { try Identity(parsing: region) }
        let parsed = try Identity(parsing: region, allowRegion: true)
        #expect(parsed.isRegion)
        #expect(try !Identity(parsing: region + ":3").isRegion)
        #expect(throws: ValueError.self) { try Identity(parsing: "node:x", allowNode: false) }
    }

    @Test func enclosingRegionsAreMostSpecificFirst() {
        #expect(Identity.enclosingRegions(of: "ibeacon:u:1:2") == ["ibeacon:u:1", "ibeacon:u"])
        #expect(Identity.enclosingRegions(of: "eddystone:ns:inst") == ["eddystone:ns"])
        #expect(Identity.enclosingRegions(of: "mac:aa:bb:cc:dd:ee:ff").isEmpty)
    }

    @Test(arguments: ["a", "booth-12", "x.y_z-1", String(repeating: "a", count: 64)])
    func validSlugs(_ key: String) {
        #expect(Slug.isValid(key))
    }

    @Test(arguments: ["", "Desk", "desk/9", "a+b", "a#", "-a", ".a", "é", String(repeating: "a", count: 65), "a b"])
    func invalidSlugs(_ key: String) {
        #expect(!Slug.isValid(key))
        #expect(throws: ValueError.self) { try Slug(key, what: "beacon") }
    }

    @Test func durations() throws {
        #expect(try DurationText.milliseconds("15s") == 15_000)
        #expect(try DurationText.milliseconds("500ms") == 500)
        #expect(try DurationText.milliseconds("2m") == 120_000)
        #expect(try DurationText.milliseconds("1.5h") == 5_400_000)
        #expect(try DurationText.milliseconds("7d") == 604_800_000)
        #expect(try DurationText.milliseconds("3") == 3_000)
        for bad in ["", "s", "-1s", "1x", "1 s", "inf", "1e3s"] {
            #expect(throws: ValueError.self, "\(bad)") { try DurationText.milliseconds(bad) }
        }
    }
}

@Suite struct TopicsTests {
    @Test func nodeMessagesAreRecognisedUnderAnyPrefix() throws {
        #expect(Topics.nodeMessage(in: "presence/v1/sightings/hall-a") == .sightings(node: "hall-a"))
        #expect(Topics.nodeMessage(in: "site/x/v1/nodes/hall-a/status") == .status(node: "hall-a"))
        #expect(Topics.nodeMessage(in: "p/v1/nodes/hall-a/stats") == .stats(node: "hall-a"))
        #expect(Topics.nodeMessage(in: "p/v1/events/b/u") == nil)
        #expect(Topics.nodeMessage(in: "p/v1/sightings/") == nil)
        #expect(Topics.nodeMessage(in: "v1/sightings/n1") == .sightings(node: "n1"), "the prefix may be a single level")
        // A batch's shard (the sharding extension) follows its node; the node is what counts.
        #expect(Topics.nodeMessage(in: "p/v1/sightings/hall-a/3") == .sightings(node: "hall-a"))
        #expect(Topics.nodeMessage(in: "p/v1/sightings/7") == .sightings(node: "7"), "a numeric key is a node, not a shard")
        #expect(Topics.nodeMessage(in: "p/v1/sightings/hall-a/x") == nil)
        #expect(Topics.nodeMessage(in: "p/v1/sightings/hall-a/3/4") == nil)
        #expect(Topics.nodeMessage(in: "p/v1/nodes//status") == nil)
        let topics = try Topics(prefix: "site/a")
        for (topic, message) in [(topics.sightings(node: "n1"), Topics.NodeMessage.sightings(node: "n1")), (topics.nodeStatus(node: "n1"), .status(node: "n1")),
                                 (topics.nodeStats(node: "n1"), .stats(node: "n1"))] {
            #expect(Topics.nodeMessage(in: topic) == message, "\(topic)")
        }
        for bad in ["", "a/#", "a/+/b", "/a", "a/", "a//b"] {
            #expect(throws: ValueError.self, "\(bad)") { try Topics(prefix: bad) }
        }
    }
}
