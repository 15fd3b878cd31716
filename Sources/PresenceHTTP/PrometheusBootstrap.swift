import Metrics
import Prometheus

/// The process's Prometheus registry, with swift-metrics bootstrapped to feed it on first use
/// (once per process: swift-metrics allows no second bootstrap).
public enum PrometheusBootstrap {
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Waits from milliseconds (a broker at hand) to minutes (a broker coming back).
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }()
}
