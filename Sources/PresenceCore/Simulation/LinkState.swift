/// A transmitter-receiver pair.
struct LinkID: Hashable, Sendable {
    var transmitter: String
    var node: String
}

/// One transmitter-receiver pair: its random stream (shadowing, fading and losses, in that order
/// for each packet) and its own shadowing.
struct LinkState: Sendable {
    var random: RandomSource
    var shadowing: Shadowing

    init(seed: UInt64, id: LinkID, sigma: Double, at time: Int64) {
        var random = RandomSource(seed: seed, labels: "link", id.transmitter, id.node)
        shadowing = Shadowing(sigma: sigma, at: time, random: &random)
        self.random = random
    }
}
