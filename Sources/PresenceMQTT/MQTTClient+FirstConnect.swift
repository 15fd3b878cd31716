import CMosquitto
import Logging
import PresenceCore
import Synchronization

import class Foundation.Thread

/// libmosquitto 2.0.11's network thread starts its loop only once a connection attempt is under
/// way. When `mosquitto_connect_async` fails at once (the host name does not resolve yet, the
/// network is unreachable), the thread waits for good and nothing is ever retried. Until one attempt
/// gets under way, a thread of ours retries under the retry policy; libmosquitto's loop handles
/// every failure after that, but one: a broker's DISCONNECT of an MQTT 5 connection (administrative
/// action, session taken over) ends the network thread as if the client had asked. Then a thread
/// of ours waits for it to end, starts it again and retries the same way.
extension MQTTClient {
    func retryFirstConnect() {
        state.withLock { $0.retryingFirstConnect = true }
        Thread.detachNewThread { self.runFirstConnectRetries() }
    }

    /// The broker disconnected the client with a reason, which ends libmosquitto's network thread:
    /// start it again and connect under the retry policy, unless the client stops first.
    func restartAfterBrokerDisconnect() {
        state.withLock { $0.retryingFirstConnect = true }
        Thread.detachNewThread {
            // Joins the network thread, which ends once the disconnect callback has returned; a new
            // one starts once an attempt is under way (started before, it would end at once).
            _ = mosquitto_loop_stop(self.handle, false)
            self.runFirstConnectRetries(startingTheLoop: true)
        }
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

    private func runFirstConnectRetries(startingTheLoop: Bool = false) {
        var attempts = RetryPolicy.Attempts(configuration.retry)
        while pause(attempts.failed()) {
            let rc = mosquitto_reconnect_async(handle)
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                logger.info("connection attempt under way")
                if startingTheLoop {
                    let started = mosquitto_loop_start(handle)
                    if started != MOSQ_ERR_SUCCESS.rawValue {
                        logger.critical("MQTT client cannot reconnect", metadata: ["error": "\(MQTTError("cannot start the MQTT network thread", rc: started))"])
                    }
                }
                break
            }
            logger.warning("connection attempt failed; retrying", metadata: ["error": "\(MQTTError("connect", rc: rc))"])
        }
        endConnectRetries()
    }

    private func endConnectRetries() {
        let waiter = state.withLock { state in
            state.retryingFirstConnect = false
            let waiter = state.firstConnectRetriesEnded
            state.firstConnectRetriesEnded = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Sleeps for `delay` unless the client stops first; true if it is still running.
    private func pause(_ delay: Duration) -> Bool {
        let deadline = ContinuousClock.now + delay
        while ContinuousClock.now < deadline {
            guard state.withLock({ $0.phase == .running }) else { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return state.withLock { $0.phase == .running }
    }
}
