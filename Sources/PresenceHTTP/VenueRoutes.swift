import Hummingbird
import NIOCore
import PresenceCore
import Prometheus

/// The server's routes; each answers from `VenueServer.Sources` and nothing else.
enum VenueRoutes {
    static func router(_ sources: VenueServer.Sources) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/") { _, _ in file(PackageResources.index_html, type: "text/html; charset=utf-8") }
        router.get("/app.js") { _, _ in file(PackageResources.app_js, type: "text/javascript; charset=utf-8") }
        router.get("/style.css") { _, _ in file(PackageResources.style_css, type: "text/css; charset=utf-8") }
        router.get("/healthz") { _, _ in json(Array(#"{"v":1,"alive":true}"#.utf8)) }
        router.get("/readyz") { _, _ in readiness(sources.readiness()) }
        router.get("/metrics") { _, _ in
            sources.beforeScrape()
            var text: [UInt8] = []
            sources.metrics.emit(into: &text)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
        }
        router.get("/api/snapshot") { _, _ in await page(sources, .snapshot(at: sources.now())) }
        router.get("/api/presence") { _, _ in await page(sources, .presence(at: sources.now())) }
        router.get("/api/nodes") { _, _ in await page(sources, .nodes) }
        router.get("/api/events") { request, _ in
            let query = request.uri.queryParameters
            guard let after = Int64(query["after"].map(String.init) ?? "0"), let limit = Int(query["limit"].map(String.init) ?? "100"),
                  after >= 0, (1 ... 1_000).contains(limit) else {
                return problem(.badRequest, "after must be a cursor (0 or more) and limit 1 to 1000")
            }
            return await page(sources, .events(after: after, limit: limit))
        }
        router.get("/api/visits") { request, _ in
            guard let hours = Int(request.uri.queryParameters["hours"].map(String.init) ?? "8"), (1 ... 24 * 31).contains(hours) else {
                return problem(.badRequest, "hours must be 1 to 744")
            }
            let since = sources.now() - Int64(hours) * 3_600_000
            do {
                return json(VisitCount.encode(try await sources.visits(since), since: since))
            } catch {
                return problem(.serviceUnavailable, "the database cannot be asked now")
            }
        }
        router.get("/api/stream") { _, _ in
            guard case .stream(let stream)? = await sources.page(.stream(at: sources.now())) else {
                return problem(.serviceUnavailable, "the aggregator cannot show the venue now (starting or stopping)")
            }
            let body = ResponseBody { writer in
                for await message in stream {
                    try await writer.write(ByteBuffer(bytes: message))
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
        }
        return router
    }

    /// The page's JSON for `question`, or 503 when the aggregator cannot answer now.
    private static func page(_ sources: VenueServer.Sources, _ question: VenueServer.PageQuestion) async -> Response {
        guard case .json(let bytes)? = await sources.page(question) else {
            return problem(.serviceUnavailable, "the aggregator cannot show the venue now (starting or stopping)")
        }
        return json(bytes)
    }

    private static func file(_ bytes: [UInt8], type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private static func problem(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var w = JSONWriter()
        w.object { w in
            w.member("v", 1)
            w.member("error", message)
        }
        return json(w.bytes, status: status)
    }

    private static func readiness(_ checks: [ReadinessCheck]) -> Response {
        let ready = checks.allSatisfy(\.passed)
        var w = JSONWriter()
        w.object { w in
            w.member("v", 1)
            w.key("ready")
            w.bool(ready)
            w.key("checks")
            w.object { w in
                for check in checks {
                    w.key(check.name)
                    w.bool(check.passed)
                }
            }
            let problems = checks.compactMap { check in check.problem.map { (check.name, $0) } }
            if !problems.isEmpty {
                w.key("problems")
                w.object { w in
                    for (name, problem) in problems { w.member(name, problem) }
                }
            }
        }
        return json(w.bytes, status: ready ? .ok : .serviceUnavailable)
    }
}
