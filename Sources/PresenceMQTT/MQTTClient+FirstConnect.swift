import CMosquitto
import Logging
import Synchronization

import class Foundation.Thread

/// libmosquitto 2.0.11's network thread starts its loop only once a connection attempt is under
/// way. When `mosquitto_connect_async` fails at once (the host name does not resolve yet, the
/// network is unreachable), the thread waits for good and nothing is ever retried. Until one attempt
/// gets under way, a thread of ours retries with the configured back-off; libmosquitto's loop
/// handles every failure after that.
extension MQTTClient {
    func retryFirstConnect() {
        state.withLock { $0.retryingFirstConnect = true }
        Thread.detachNewThread { self.runFirstConnectRetries() }
    }

    /// Returns once the retrying thread (if any) has ended; `stop()` must not disconnect while a
    /// retry could still start a connection.
    func waitForFirstConnectRetries() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let retrying = state.withLock { state in
                guard state.retryingFirstConnect else { return false }
                state.firstConnectRetriesEnded = continuation
                return true
            }
            if !retrying { continuation.resume() }
        }
    }

    private func runFirstConnectRetries() {
        var attempt = 0
        while pause(seconds: min(configuration.reconnectDelayMax, configuration.reconnectDelayMin * (attempt + 1) * (attempt + 1))) {
            let rc = mosquitto_reconnect_async(handle)
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                logger.info("connection attempt under way")
                break
            }
            logger.warning("connection attempt failed; retrying", metadata: ["error": "\(MQTTError("connect", rc: rc))"])
            attempt = min(attempt + 1, 1_000)
        }
        let waiter = state.withLock { state in
            state.retryingFirstConnect = false
            let waiter = state.firstConnectRetriesEnded
            state.firstConnectRetriesEnded = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Sleeps for `seconds` unless the client stops first; true if it is still running.
    private func pause(seconds: Int) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            guard state.withLock({ $0.phase == .running }) else { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return state.withLock { $0.phase == .running }
    }
}
