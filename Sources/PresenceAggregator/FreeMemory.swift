import Glibc

/// The free memory glibc's malloc keeps after a burst (a crowd's enter wave makes events, messages
/// and payloads of about 2 KiB a person at once), given back to the system with `malloc_trim(0)`,
/// looked up by name since Swift's Glibc module leaves malloc.h out. At 100,000 devices it returns
/// about 1.5 KiB a device in about 12 ms (`presence-bench memory`).
public enum FreeMemory {
    /// Gives back what malloc keeps free; nothing where `malloc_trim` does not exist.
    public static func giveBack() {
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
    }
}
