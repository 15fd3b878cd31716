import Logging
import PresenceCore
import PresencePostgres
import PresenceStore
import ServiceLifecycle
import Synchronization

/// Keeps the decision loop's registry fresh beside it: loads the registry on its own connection
/// when the database notifies a change (after a short pause that gathers a burst of changes),
/// when its listener (re)connects, and at least every `registryRefresh`, and hands each load to
/// the loop, which swaps it in between two messages. The loop never waits on the database.
final class RegistryWatcher: Service {
    private let configuration: AggregatorConfiguration
    private let inbox: LoopInbox
    private let logger: Logger
    /// Wakes the loader; a wake-up already waiting stands for later ones.
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    static let pause: Duration = .milliseconds(250)

    init(configuration: AggregatorConfiguration, inbox: LoopInbox, logger: Logger) {
        self.configuration = configuration
        self.inbox = inbox
        self.logger = logger
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func run() async throws {
        let listener = PostgresListener(configuration: configuration.database, channels: ["presence_registry"], logger: logger)
        listener.start()
        defer { listener.stop() }
        await cancelWhenGracefulShutdown { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [wake] in
                    for await _ in listener.events { wake.yield() }
                }
                group.addTask { [wake, refresh = configuration.registryRefresh] in
                    while (try? await Task.sleep(for: .milliseconds(refresh))) != nil { wake.yield() }
                }
                group.addTask { await self.loadOnWake() }
                await group.waitForAll()
            }
        }
    }

    /// Loads on every wake-up; after a failure, tries again every few seconds (saying so once).
    private func loadOnWake() async {
        var database: PostgresConnection?
        var failing = false
        for await _ in wakeups {
            guard (try? await Task.sleep(for: Self.pause)) != nil else { break }
            do {
                if database == nil {
                    database = try await PostgresConnection.connect(configuration.database, logger: logger)
                }
                guard let connection = database else { continue }
                let registry = try await connection.loadRegistry()
                inbox.loaded(registry, at: WallClock.milliseconds())
                if failing { logger.notice("the registry loads again") }
                failing = false
            } catch {
                if !failing {
                    logger.warning("could not reload the registry; keeping the one loaded before and trying again", metadata: ["error": "\(error)"])
                }
                failing = true
                await database?.close()
                database = nil
                wake.yield()
                guard (try? await Task.sleep(for: .seconds(3))) != nil else { break }
            }
        }
        await database?.close()
    }
}
