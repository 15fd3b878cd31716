import ServiceLifecycle

/// Keeps the journal open for as long as the aggregator runs; the last part to stop, it closes
/// the journal once every other part is done with it.
final class JournalService: Service {
    let journal: Journal

    init(journal: Journal) {
        self.journal = journal
    }

    func run() async throws {
        try? await gracefulShutdown()
        journal.close()
    }
}
