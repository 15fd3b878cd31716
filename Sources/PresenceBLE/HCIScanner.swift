import Logging
import PresenceCore
import Synchronization

import class Foundation.Thread

/// Scans one adapter and delivers its HCI event packets (advertising reports among them) as an
/// `AsyncStream`, read on a thread of its own so that blocking reads never touch Swift's
/// cooperative pool. When the adapter goes away or resets, it reopens it and scans again, with
/// back-off. With `configuration.advertising` it also transmits through the adapter, and sends the
/// advertising commands again every `advertisingRefresh` and after a reopen, so that advertising
/// taken over by another program (bluetoothd, on a controller with one legacy set) or cleared by a
/// reset comes back. On stop it turns off the scan and the advertising it started.
public final class HCIScanner: Sendable {
    public let configuration: HCIScanConfiguration
    /// Event packets as they are read; finishes after `stop`.
    public let packets: AsyncStream<HCIPacket>
    private let continuation: AsyncStream<HCIPacket>.Continuation
    private let logger: Logger
    private let state = Mutex(State())
    /// How often the advertising commands are sent again while scanning.
    public static let advertisingRefresh: Duration = .seconds(60)

    private struct State {
        var stopping = false
    }

    /// Opens the adapter and starts scanning (and advertising); errors (no adapter, no kernel
    /// support, missing capabilities, a refused command) are thrown here, before any thread starts.
    public init(configuration: HCIScanConfiguration, logger: Logger) throws(BLEError) {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        (packets, continuation) = AsyncStream.makeStream(of: HCIPacket.self, bufferingPolicy: .bufferingNewest(50_000))
        let device = try Self.open(configuration)
        let commands = try Self.start(device, configuration)
        logger.notice("scanning", metadata: ["adapter": "\(configuration.adapter)", "mode": "\(configuration.mode.rawValue)",
                                             "commands": "\(commands.scan.map { "\($0)" } ?? "none")", "active": "\(configuration.active)",
                                             "advertising_ms": "\(configuration.advertising.map { "\($0.interval)" } ?? "off")",
                                             "advertising_commands": "\(commands.advertising.map { "\($0)" } ?? "none")"])
        let thread = Thread { [self] in self.read(device, commands) }
        thread.name = "hci-\(configuration.adapter)"
        thread.start()
    }

    private static func open(_ configuration: HCIScanConfiguration) throws(BLEError) -> HCIDevice {
        switch configuration.mode {
        case .scan: try HCIDevice.openRaw(configuration.adapter)
        case .monitor: try HCIDevice.openMonitor(configuration.adapter)
        }
    }

    /// The commands a started adapter took: none in the monitor mode.
    private struct Commands {
        var scan: HCIDevice.ScanCommands?
        var advertising: HCIDevice.AdvertisingCommands?
    }

    private static func start(_ device: HCIDevice, _ configuration: HCIScanConfiguration) throws(BLEError) -> Commands {
        guard configuration.mode == .scan else { return Commands() }
        do throws(BLEError) {
            let scan = try device.startScan(configuration)
            guard let advertising = configuration.advertising else { return Commands(scan: scan) }
            do {
                return Commands(scan: scan, advertising: try device.startAdvertising(advertising, adapter: configuration.adapter))
            } catch {
                device.stopScan(scan)
                throw error
            }
        } catch {
            device.close()
            throw error
        }
    }

    /// Stops reading; the reader thread then turns the scan off and finishes `packets`. Idempotent.
    public func stop() {
        state.withLock { $0.stopping = true }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    private func read(_ first: HCIDevice, _ firstCommands: Commands) {
        var device: HCIDevice? = first
        var commands = firstCommands
        var delay = 1.0
        var advertised = ContinuousClock.now
        var refreshFailing = false
        while !stopping {
            guard let current = device else {
                Thread.sleep(forTimeInterval: delay)
                do {
                    let reopened = try Self.open(configuration)
                    commands = try Self.start(reopened, configuration)
                    device = reopened
                    delay = 1
                    advertised = .now
                    logger.notice("adapter back; scanning again", metadata: ["adapter": "\(configuration.adapter)"])
                } catch {
                    logger.warning("adapter still unavailable", metadata: ["adapter": "\(configuration.adapter)", "error": "\(error)", "retry_in_s": "\(delay)"])
                    delay = min(delay * 2, 30)
                }
                continue
            }
            if let advertising = configuration.advertising, advertised.duration(to: .now) >= Self.advertisingRefresh {
                advertised = .now
                do {
                    commands.advertising = try current.startAdvertising(advertising, adapter: configuration.adapter)
                    if refreshFailing { logger.notice("advertising again", metadata: ["adapter": "\(configuration.adapter)"]) }
                    refreshFailing = false
                } catch {
                    if !refreshFailing { logger.warning("cannot advertise again; retrying every minute", metadata: ["adapter": "\(configuration.adapter)", "error": "\(error)"]) }
                    refreshFailing = true
                }
            }
            do {
                if let bytes = try current.readEvent(timeout: 100) {
                    continuation.yield(HCIPacket(bytes: bytes, time: WallClock.milliseconds()))
                } else {
                    continuation.yield(HCIPacket(bytes: [], time: WallClock.milliseconds()))
                }
            } catch {
                logger.error("adapter lost; reopening", metadata: ["adapter": "\(configuration.adapter)", "error": "\(error)"])
                current.close()
                device = nil
            }
        }
        if let device {
            if let advertising = commands.advertising { device.stopAdvertising(advertising) }
            if let scan = commands.scan { device.stopScan(scan) }
            device.close()
        }
        continuation.finish()
    }
}
