import CMosquitto

/// `mosquitto_lib_init` must run exactly once, before any other libmosquitto call and not
/// concurrently with anything: a `static let` initialiser runs once, under a lock.
enum MosquittoLibrary {
    static let initialized: Int32 = mosquitto_lib_init()
}

extension MQTTClient {
    /// A new libmosquitto handle with everything that must be set before connecting.
    static func makeHandle(_ configuration: MQTTConfiguration) throws(MQTTError) -> OpaquePointer {
        try check(MosquittoLibrary.initialized, "cannot initialise libmosquitto")
        let id = configuration.clientID.isEmpty ? nil : configuration.clientID
        guard let handle = mosquitto_new(id, configuration.cleanSession, nil) else {
            throw MQTTError(message: "cannot create an MQTT client with id \"\(configuration.clientID)\": out of memory")
        }
        do throws(MQTTError) {
            try configure(handle, configuration)
        } catch {
            mosquitto_destroy(handle)
            throw error
        }
        return handle
    }

    private static func configure(_ handle: OpaquePointer, _ configuration: MQTTConfiguration) throws(MQTTError) {
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, version), "cannot set the MQTT protocol version")
        // Our own window bounds what reaches libmosquitto; its limit must not be the smaller one.
        // (With MQTT 5 the broker's receive-maximum replaces it at every CONNACK.)
        try check(mosquitto_int_option(handle, MOSQ_OPT_SEND_MAXIMUM, Int32(configuration.maxInFlight)),
                  "cannot set the in-flight maximum")

        // Without it, a small publish waits for the broker's delayed ACK of the one before (40 ms on
        // Linux): QoS 1 throughput on loopback fell from thousands of messages a second to hundreds.
        try check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1), "cannot turn off Nagle's algorithm")

        let url = configuration.url
        if let username = url.username {
            try check(mosquitto_username_pw_set(handle, username, url.password), "cannot set the user name and password")
        }
        if let will = configuration.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(will.qos), will.retain)
            }
            try check(rc, "cannot set the will on \(will.topic)")
        }
        let waits = configuration.retry.wholeSeconds
        try check(mosquitto_reconnect_delay_set(handle, UInt32(waits.first), UInt32(waits.longest), true),
                  "cannot set the reconnect delays")
        if url.tls {
            if let caFile = configuration.caFile {
                try check(mosquitto_tls_set(handle, caFile, nil, configuration.certFile, configuration.keyFile, nil),
                          configuration.certFile.map { "cannot use CA file \(caFile) with certificate \($0)" } ?? "cannot use CA file \(caFile)")
            } else {
                try check(mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1),
                          "cannot use the operating system's CA certificates")
            }
            // 1 = SSL_VERIFY_PEER: the broker's certificate and host name are checked; never insecure.
            try check(mosquitto_tls_opts_set(handle, 1, nil, nil), "cannot require TLS peer verification")
        }
    }

    /// Refuses a message libmosquitto could not publish, naming what is wrong.
    static func validate(_ message: MQTTMessage) throws(MQTTError) {
        guard (0...2).contains(message.qos) else {
            throw MQTTError(message: "QoS \(message.qos) of the message to \(message.topic) is not 0, 1 or 2")
        }
        guard message.payload.count <= 268_435_455 else {
            throw MQTTError(message: "payload of \(message.payload.count) bytes to \(message.topic) exceeds MQTT's 256 MiB")
        }
        try check(mosquitto_pub_topic_check(message.topic), "cannot publish to topic \"\(message.topic)\"")
    }

    /// Refuses a subscription libmosquitto could not make, naming what is wrong.
    static func validate(_ subscription: MQTTSubscription) throws(MQTTError) {
        guard (0...2).contains(subscription.qos) else {
            throw MQTTError(message: "QoS \(subscription.qos) of the subscription to \(subscription.filter) is not 0, 1 or 2")
        }
        try check(mosquitto_sub_topic_check(subscription.filter), "cannot subscribe to \"\(subscription.filter)\"")
    }
}
