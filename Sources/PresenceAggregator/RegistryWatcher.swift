import Logging
import PresenceCore
import PresencePostgres
import PresenceStore
import ServiceLifecycle

/// Keeps the decision loop's registry fresh beside it: loads the registry through the client when
/// the database notifies a change (after a short pause that gathers a burst of changes), when its
/// listener (re)connects, and at least every `registryRefresh`, and hands each load to the loop,
/// which swaps it in between two messages. The loop never waits on the database; a load that fails
/// is tried again under the client's retry policy.
final class RegistryWatcher: Service {
    private let configuration: AggregatorConfiguration
    private let postgres: PostgresClient
    private let inbox: LoopInbox
    private let logger: Logger
    /// Wakes the loader; a wake-up already waiting stands for later ones.
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    static let pause: Duration = .milliseconds(250)

    init(configuration: AggregatorConfiguration, postgres: PostgresClient, inbox: LoopInbox, logger: Logger) {
        self.configuration = configuration
        self.postgres = postgres
        self.inbox = inbox
        self.logger = logger
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func run() async throws {
        let listener = postgres.listener(channels: ["presence_registry"])
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

    /// Loads on every wake-up; after a failure, tries again under the retry policy (saying so once).
    private func loadOnWake() async {
        var failures = 0
        for await _ in wakeups {
            guard (try? await Task.sleep(for: Self.pause)) != nil else { break }
            do {
                let registry = try await postgres.withConnection { try await $0.loadRegistry() }
                inbox.loaded(registry, at: WallClock.milliseconds())
                if failures > 0 { logger.notice("the registry loads again") }
                failures = 0
            } catch is CancellationError {
                break
            } catch {
                if failures == 0 {
                    logger.warning("could not reload the registry; keeping the one loaded before and trying again", metadata: ["error": "\(error)"])
                }
                failures += 1
                wake.yield()
                guard (try? await Task.sleep(for: postgres.retry.delay(after: failures))) != nil else { break }
            }
        }
    }
}
