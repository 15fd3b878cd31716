import PresenceMQTT
import Testing

@Suite struct MQTTURLTests {
    @Test(arguments: [
        ("mqtt://broker.local", MQTTURL(host: "broker.local", port: 1883)),
        ("mqtts://broker.local", MQTTURL(host: "broker.local", port: 8883, tls: true)),
        ("MQTT://10.0.0.5:1999/", MQTTURL(host: "10.0.0.5", port: 1999)),
        ("mqtt://alice@h", MQTTURL(host: "h", username: "alice")),
        ("mqtts://alice:s3cret@h:9000", MQTTURL(host: "h", port: 9000, tls: true, username: "alice", password: "s3cret")),
        ("mqtt://[::1]:1884", MQTTURL(host: "::1", port: 1884)),
        ("mqtt://[::1]", MQTTURL(host: "::1", port: 1883)),
    ])
    func validForms(text: String, expected: MQTTURL) throws {
        #expect(try MQTTURL(parsing: text) == expected)
    }

    @Test func userAndPasswordArePercentDecoded() throws {
        let url = try MQTTURL(parsing: "mqtt://sc%40nner%20one:p%3Ass%2F%40w%C3%B6rd@host")
        #expect(url.username == "sc@nner one")
        #expect(url.password == "p:ss/@wörd")
        #expect(url.host == "host")
    }

    @Test(arguments: [
        ("http://host", "\"http\""),
        ("host:1883", "no scheme"),
        ("mqtt://host:0", "\"0\""),
        ("mqtt://host:65536", "\"65536\""),
        ("mqtt://host:12ab", "\"12ab\""),
        ("mqtt://host:", "port \"\""),
        ("mqtt://", "host is empty"),
        ("mqtt://user:pw@:1883", "host is empty"),
        ("mqtt://host/topic", "path"),
        ("mqtt://ho st", "\"ho st\""),
        ("mqtt://us%zzer@host", "user name"),
        ("mqtt://:secret@host", "needs a user name"),
    ])
    func badURLsAreRefusedNamingTheBadPart(text: String, named: String) {
        #expect {
            _ = try MQTTURL(parsing: text)
        } throws: { error in
            let message = "\(error)"
            return message.contains(named) && !message.contains("\n") && !message.contains("secret")
        }
    }

    @Test func messagesAndDescriptionsHideThePassword() throws {
        let url = try MQTTURL(parsing: "mqtts://alice:hunter2@broker:8884")
        #expect(url.description == "mqtts://alice:***@broker:8884")
        #expect(!String(reflecting: url).contains("hunter2"))
        var dumped = ""
        dump(url, to: &dumped)
        #expect(!dumped.contains("hunter2"))

        #expect {
            _ = try MQTTURL(parsing: "mqtt://alice:hunter2@broker:99999")
        } throws: { error in
            let message = "\(error)"
            return message.contains("99999") && message.contains("alice:***@") && !message.contains("hunter2")
        }
    }
}
