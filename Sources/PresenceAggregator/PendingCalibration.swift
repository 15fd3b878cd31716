import PresenceCore
import Synchronization

/// The node offsets the decision loop wants stored, handed to the database writer: the loop
/// leaves the latest here without waiting, the writer takes it after its next transaction. Only
/// the latest matters (each holds every applied offset), so a newer one replaces one not yet
/// taken, and one the database could not take goes back unless a newer one came meanwhile.
final class PendingCalibration: Sendable {
    private let state = Mutex<(waiting: SelfCalibration.Summary?, generation: UInt64)>((nil, 0))

    /// Leaves `calibration` for the writer, replacing one not yet taken.
    func offer(_ calibration: SelfCalibration.Summary) {
        state.withLock { $0 = (calibration, $0.generation &+ 1) }
    }

    /// The calibration waiting, if any, and its generation (for `giveBack`).
    func take() -> (calibration: SelfCalibration.Summary, generation: UInt64)? {
        state.withLock { state in
            guard let waiting = state.waiting else { return nil }
            state.waiting = nil
            return (waiting, state.generation)
        }
    }

    /// Puts back a calibration that could not be stored, unless a newer one was offered since.
    func giveBack(_ calibration: SelfCalibration.Summary, generation: UInt64) {
        state.withLock { state in
            if state.generation == generation, state.waiting == nil { state.waiting = calibration }
        }
    }
}
