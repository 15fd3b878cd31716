extension Scenario {
    /// The radio environment. Every feature after the first ones (`lossFadeWidth` and below) is
    /// off by default, so that a scenario that does not name it hears what it always heard.
    public struct Radio: Codable, Sendable, Equatable {
        /// Log-distance path-loss exponent.
        public var pathLossExponent = 2.2
        /// Standard deviation of the slow shadowing, per (transmitter, receiver), dB.
        public var shadowingSigma = 4.0
        /// How long shadowing stays correlated (its time constant), ms.
        public var shadowingTime: Int64 = 5_000
        /// Standard deviation of the fast fading of each packet, dB.
        public var fadingSigma = 2.0
        /// Share of packets lost.
        public var packetLoss = 0.3
        /// Extra loss when the carrier's body stands between transmitter and receiver, dB.
        public var bodyLoss = 6.0
        /// Standard deviation of each receiver's fixed gain error, dB (see also `nodeGainSpread`).
        public var nodeGainSigma = 2.0
        /// Weakest receivable signal, dBm.
        public var sensitivity = -100.0
        /// Calibrated power at 1 m of tags and beacons unless they say otherwise.
        public var txPower = -59.0
        /// Time between advertisements, ms (each packet is jittered by up to 10 ms, as BLE does).
        public var advertisingInterval: Int64 = 1_000
        /// Width of the loss that grows as a packet nears `sensitivity`, dB; 0 turns it off. On top
        /// of `packetLoss`, a packet is lost with probability 1 / (1 + exp(margin / width)), the
        /// margin being how far its expected RSSI (everything but the per-packet fade) stands
        /// above `sensitivity`: half of the packets expected at the floor, 5 % of those three
        /// widths above it. Far receivers hear less, as real ones do.
        public var lossFadeWidth = 0.0
        /// Mean time between a dwelling person's turns, ms; 0 turns it off (they face the beacon
        /// throughout). With it, a person arrives facing the beacon and turns after exponentially
        /// distributed intervals, each time to a direction drawn uniformly, so that the body
        /// blocks a node at times and not at others. Walking, people face where they go.
        public var turnInterval: Int64 = 0
        /// Standard deviation of a shadowing shared by all links of one transmitter (the crowd and
        /// the carrier's surroundings, which every receiver hears alike), dB, correlated over
        /// `shadowingTime` like the per-link one; 0 turns it off.
        public var sharedShadowingSigma = 0.0
        /// How each packet's fast fade is drawn.
        public var fading = Fading.gaussian
        /// Half-width of a uniformly drawn part of each receiver's fixed gain error, dB: the gain
        /// is off by up to ±spread (plus the gaussian `nodeGainSigma` part); 0 turns it off.
        public var nodeGainSpread = 0.0
        /// How often each fixed node transmits its node beacon (`NodeBeacon`, as
        /// `presence-scanner --advertise` does), ms; 0 turns it off. The other fixed nodes hear it
        /// (walls, shadowing and fading apply, no body); its power is `txPower` plus the node's
        /// own gain error (an antenna loses alike both ways) plus a transmit error of its own,
        /// σ 1 dB.
        public var nodeBeaconInterval: Int64 = 0

        public init() {}

        /// Models of the fast fading of each packet.
        public enum Fading: String, Codable, Sendable, Equatable, CaseIterable {
            /// Normal in dB, standard deviation `fadingSigma`.
            case gaussian
            /// Multipath: the amplitude |h| is Rayleigh with unit mean power and the fade is
            /// 20·log10|h| dB, so deep fades happen (median -1.6 dB, mean -2.5 dB, spread 5.6 dB;
            /// below -10 dB for 9.5 % of packets, below -20 dB for 1 %). `fadingSigma` is not used:
            /// the spread is the model's own.
            case rayleigh
        }
    }
}

extension Scenario.Radio {
    /// Checks ranges; the message names the bad value.
    func validate() throws(ValueError) {
        guard packetLoss >= 0, packetLoss < 1 else {
            throw ValueError("packetLoss \(packetLoss) is not valid: expected a share from 0 to below 1")
        }
        guard advertisingInterval >= 20 else {
            throw ValueError("advertisingInterval \(advertisingInterval) ms is not valid: expected 20 ms or more")
        }
        guard lossFadeWidth >= 0 else {
            throw ValueError("lossFadeWidth \(lossFadeWidth) dB is not valid: expected 0 (off) or more")
        }
        guard turnInterval == 0 || turnInterval >= 1_000 else {
            throw ValueError("turnInterval \(turnInterval) ms is not valid: expected 0 (off) or 1 s or more")
        }
        guard sharedShadowingSigma >= 0 else {
            throw ValueError("sharedShadowingSigma \(sharedShadowingSigma) dB is not valid: expected 0 (off) or more")
        }
        guard nodeBeaconInterval == 0 || nodeBeaconInterval >= 20 else {
            throw ValueError("nodeBeaconInterval \(nodeBeaconInterval) ms is not valid: expected 0 (off) or 20 ms or more")
        }
        guard nodeGainSpread >= 0 else {
            throw ValueError("nodeGainSpread \(nodeGainSpread) dB is not valid: expected 0 (off) or more")
        }
    }
}
