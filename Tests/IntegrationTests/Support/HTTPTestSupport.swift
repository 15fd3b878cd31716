import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP answer: status and body.
struct HTTPAnswer: Sendable {
    let status: Int
    let body: String

    /// The body as a JSON object, or an empty one.
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }
}

/// GETs `url` (no cache, a 10 s timeout).
func httpGet(_ url: String) async throws -> HTTPAnswer {
    guard let address = URL(string: url) else { throw TestSetupError(message: "bad URL \(url)") }
    var request = URLRequest(url: address, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
    request.httpMethod = "GET"
    let (data, response) = try await URLSession.shared.data(for: request)
    return HTTPAnswer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: String(decoding: data, as: UTF8.self))
}

/// Waits until GET `url` answers 200, checking every 200 ms; throws after `seconds`.
func waitForHTTP(_ url: String, within seconds: Double) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if let answer = try? await httpGet(url), answer.status == 200 { return }
        try await Task.sleep(for: .milliseconds(200))
    }
    throw TestSetupError(message: "\(url) did not answer 200 within \(seconds) s")
}
