/// What a source's reports are, which decides how each node decodes and counts them.
public enum ReportForm: Sendable {
    /// HCI events (an adapter's or a capture's), decoded with these options; a node's stats count
    /// advertising reports and their frames by kind.
    case hciEvents(AdvertisementDecoder.Options)
    /// Sightings the simulator made; a node's stats count each as a report of kind `simulated`.
    case simulated
}
