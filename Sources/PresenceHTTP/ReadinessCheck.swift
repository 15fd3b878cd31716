/// One check of `/readyz`: its name, whether it passes, and when it does not, why, in a line a
/// person can act on (nil: no more to say than the name).
public struct ReadinessCheck: Sendable, Equatable {
    public var name: String
    public var passed: Bool
    public var problem: String?

    public init(_ name: String, _ passed: Bool, problem: String? = nil) {
        self.name = name
        self.passed = passed
        self.problem = passed ? nil : problem
    }
}
