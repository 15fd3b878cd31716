import PresenceCore

/// The engine figures `--set key=value` can change, named as the aggregator's flags are; a
/// duration is written as the flags take it (`15s`, `500ms`, `2m`, or bare seconds).
enum EngineSettings {
    static let keys = [
        "absence-timeout", "stale-after", "decide", "switch-margin", "switch-dwell", "switch-evidence", "enter-dwell", "enter-sightings",
        "path-loss-exponent", "smoothing", "smoothing-time", "process-noise", "measurement-noise", "outlier-clamp", "node-down-hold", "lateness", "tick", "choose",
        "lag", "stay-probability", "settle-probability", "step-weight", "away-distance", "dead-zone", "hold-margin", "layout-weight",
    ]

    /// `--set`'s value, KEY=VALUE, as an override (split at the first `=`).
    static func override(_ setting: String) throws(ValueError) -> (key: String, value: String) {
        guard let equals = setting.firstIndex(of: "="), equals != setting.startIndex else {
            throw ValueError("--set '\(setting)' is not valid: expected KEY=VALUE, such as switch-margin=6")
        }
        return (String(setting[..<equals]), String(setting[setting.index(after: equals)...]))
    }

    /// The default pipeline configuration with `overrides` applied, checked by the engine's own rules.
    static func configuration(_ overrides: [(key: String, value: String)]) throws(ValueError) -> PresencePipeline.Configuration {
        var configuration = PresencePipeline.Configuration()
        for (key, value) in overrides {
            let what = "--set \(key)"
            switch key {
            case "absence-timeout": configuration.engine.absenceTimeout = try DurationText.milliseconds(value, what: what)
            case "stale-after": configuration.engine.staleAfter = try DurationText.milliseconds(value, what: what)
            case "switch-margin": configuration.engine.switchMargin = try number(value, what: what)
            case "switch-dwell": configuration.engine.switchDwell = try DurationText.milliseconds(value, what: what)
            case "switch-evidence": configuration.engine.switchEvidence = try number(value, what: what)
            case "decide":
                guard let decision = EngineConfiguration.Decision(rawValue: value) else {
                    throw ValueError("\(what) '\(value)' is not valid: expected \(EngineConfiguration.Decision.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                configuration.engine.decision = decision
            case "lag": configuration.engine.lag = try DurationText.milliseconds(value, what: what)
            case "stay-probability": configuration.engine.stayProbability = try number(value, what: what)
            case "settle-probability": configuration.engine.settleProbability = try number(value, what: what)
            case "step-weight": configuration.engine.stepWeight = try number(value, what: what)
            case "away-distance": configuration.engine.awayDistance = try number(value, what: what)
            case "dead-zone": configuration.engine.deadZone = try number(value, what: what)
            case "hold-margin": configuration.engine.holdMargin = try number(value, what: what)
            case "layout-weight": configuration.engine.layoutWeight = try number(value, what: what)
            case "enter-dwell": configuration.engine.enterDwell = try DurationText.milliseconds(value, what: what)
            case "enter-sightings":
                guard let count = Int(value) else { throw ValueError("\(what) '\(value)' is not valid: expected a whole number") }
                configuration.engine.enterSightings = count
            case "path-loss-exponent": configuration.engine.pathLossExponent = try number(value, what: what)
            case "smoothing":
                guard let method = SmoothingMethod(rawValue: value) else {
                    throw ValueError("\(what) '\(value)' is not valid: expected \(SmoothingMethod.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                configuration.engine.smoothing.method = method
            case "smoothing-time": configuration.engine.smoothing.timeConstant = try DurationText.milliseconds(value, what: what)
            case "process-noise": configuration.engine.smoothing.processNoise = try number(value, what: what)
            case "measurement-noise": configuration.engine.smoothing.measurementNoise = try number(value, what: what)
            case "outlier-clamp": configuration.engine.smoothing.clamp = try number(value, what: what)
            case "choose":
                guard let choice = EngineConfiguration.Choice(rawValue: value) else {
                    throw ValueError("\(what) '\(value)' is not valid: expected signal or position")
                }
                configuration.engine.choice = choice
            case "node-down-hold": configuration.engine.nodeDownHold = try DurationText.milliseconds(value, what: what)
            case "lateness": configuration.lateness = try DurationText.milliseconds(value, what: what)
            case "tick":
                configuration.tickInterval = try DurationText.milliseconds(value, what: what)
                guard configuration.tickInterval > 0 else { throw ValueError("\(what) '\(value)' is not valid: expected more than 0") }
            default:
                throw ValueError("--set key '\(key)' is not known: expected one of \(keys.joined(separator: ", "))")
            }
        }
        try configuration.engine.validate()
        guard configuration.lateness >= 0 else { throw ValueError("--set lateness '\(configuration.lateness)ms' is not valid: expected 0 or more") }
        return configuration
    }

    /// The figures as one line for the report, so that every table says what it measured.
    static func describe(_ configuration: PresencePipeline.Configuration) -> String {
        let engine = configuration.engine
        let f = DurationText.format
        let decision = switch engine.decision {
        case .dwell: "decide dwell (switch-margin \(engine.switchMargin) dB, switch-dwell \(f(engine.switchDwell)))"
        case .evidence: "decide evidence (switch-margin \(engine.switchMargin) dB, switch-evidence \(engine.switchEvidence) dB·s)"
        case .hmm:
            "decide hmm (lag \(f(engine.lag)), stay-probability \(engine.stayProbability)/s, settle-probability \(engine.settleProbability), "
                + "step-weight \(engine.stepWeight)/dB, away-distance \(engine.awayDistance) m, dead-zone \(engine.deadZone) dB, hold-margin \(engine.holdMargin) dB, layout-weight \(engine.layoutWeight))"
        }
        return "choose \(engine.choice.rawValue), \(decision), absence-timeout \(f(engine.absenceTimeout)), stale-after \(f(engine.staleAfter)), "
            + "enter-dwell \(f(engine.enterDwell)), enter-sightings \(engine.enterSightings), "
            + "path-loss-exponent \(engine.pathLossExponent), smoothing \(engine.smoothing.method.rawValue) (time \(f(engine.smoothing.timeConstant)), "
            + "q \(engine.smoothing.processNoise) dB²/s, r \(engine.smoothing.measurementNoise) dB², clamp \(engine.smoothing.clamp) dB), "
            + "lateness \(f(configuration.lateness)), tick \(f(configuration.tickInterval))"
    }

    private static func number(_ text: String, what: String) throws(ValueError) -> Double {
        guard let value = Double(text), value.isFinite else { throw ValueError("\(what) '\(text)' is not valid: expected a number") }
        return value
    }
}
