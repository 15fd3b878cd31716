/// Something the simulator hears: a person's tag or a beacon with an identity, advertising at its
/// interval with BLE's jitter.
struct Transmitter: Sendable {
    enum Kind: Sendable {
        case tag(user: String)
        case beacon(key: String)
    }

    let kind: Kind
    let identity: String
    let tx: Double
    let interval: Int64
    var random: RandomSource
    /// Next advertisement, ms after the start.
    var next: Int64

    init(kind: Kind, identity: String, tx: Double, seed: UInt64, interval: Int64) {
        self.kind = kind
        self.identity = identity
        self.tx = tx
        self.interval = interval
        random = RandomSource(seed: seed, labels: "advertising", identity)
        next = Int64(random.uniform() * Double(interval))
    }

    mutating func scheduleNext() {
        next += interval + Int64(random.uniform() * 10)
    }
}
