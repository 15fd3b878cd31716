/// Something the simulator hears: a person's tag, a beacon with an identity or a node's own
/// beacon, advertising at its interval with BLE's jitter, and the shadowing that all of its links
/// share.
struct Transmitter: Sendable {
    enum Kind: Sendable {
        case tag(user: String)
        case beacon(key: String)
        case node(key: String)
    }

    let kind: Kind
    let identity: String
    /// The power it transmits with (at 1 m), and the power its frames say it does.
    let tx: Double
    let advertisedTx: Double
    let interval: Int64
    var random: RandomSource
    /// Next advertisement, ms after the start.
    var next: Int64
    /// The shadowing every link of this transmitter shares (from its first use), and its stream.
    private var shared: Shadowing?
    private var sharedRandom: RandomSource

    init(kind: Kind, identity: String, tx: Double, advertisedTx: Double? = nil, seed: UInt64, interval: Int64) {
        self.kind = kind
        self.identity = identity
        self.tx = tx
        self.advertisedTx = advertisedTx ?? tx
        self.interval = interval
        random = RandomSource(seed: seed, labels: "advertising", identity)
        next = Int64(random.uniform() * Double(interval))
        sharedRandom = RandomSource(seed: seed, labels: "shared-shadowing", identity)
    }

    /// The shared shadowing at `time` (ms after the start), dB; 0 when `sigma` is 0.
    mutating func sharedShadow(at time: Int64, sigma: Double, constant: Int64) -> Double {
        guard sigma > 0 else { return 0 }
        var shadowing = shared ?? Shadowing(sigma: sigma, at: time, random: &sharedRandom)
        let value = shadowing.advance(to: time, sigma: sigma, constant: constant, random: &sharedRandom)
        shared = shadowing
        return value
    }

    mutating func scheduleNext() {
        next += interval + Int64(random.uniform() * 10)
    }
}
