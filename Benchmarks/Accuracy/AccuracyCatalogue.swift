/// Every scenario the benchmark scores, in report order: the simulations (the slow-fade cells' tuning
/// seeds among them), the channel grid and its slow-fade cells, the calibration experiment, then the
/// datasets.
enum AccuracyCatalogue {
    static func scenarios(quick: Bool, data: String) -> [BenchScenario] {
        SimulatedVenues.scenarios(quick: quick) + SlowFadeGrid.scenarios(quick: quick, heldOut: false) + ChannelGrid.scenarios(quick: quick)
            + SlowFadeGrid.scenarios(quick: quick, heldOut: true) + CalibrationExperiment.scenarios(quick: quick) + [
            BenchScenario(name: "tetam sensors",
                          note: "TETAM, 5 camera-annotated tracks: 12 sensors, each a node anchored to its own beacon; truth = sensor nearest the camera position in 3D",
                          dataset: "tetam") { try TETAMDataset.runs(directory: data, grouping: .sensors, calibrated: false) },
            BenchScenario(name: "tetam sensors calibrated",
                          note: "the same, each node with the RSSI offset that evens out the receivers (fitted from the camera positions of the tuning part's tracks only, path-loss exponent 2)",
                          dataset: "tetam") { try TETAMDataset.runs(directory: data, grouping: .sensors, calibrated: true) },
            BenchScenario(name: "tetam zones",
                          note: "TETAM, the same tracks: the sensors' four groups (sensor1x … 4x) as four beacons with three nodes each; truth = group of the nearest sensor",
                          dataset: "tetam") { try TETAMDataset.runs(directory: data, grouping: .zones, calibrated: false) },
            BenchScenario(name: "sal-door car",
                          note: "SAL door, 8 car runs: I-* nodes anchored to beacon inside, O-* to outside, a sighting per node per 100 ms superframe; truth = photosensor label",
                          dataset: "sal-door") { try SalDoorDataset.runs(directory: data, kind: "car") },
            BenchScenario(name: "sal-door walk",
                          note: "SAL door, 2 walking runs, the same model",
                          dataset: "sal-door") { try SalDoorDataset.runs(directory: data, kind: "walk") },
            BenchScenario(name: "wmu-library",
                          note: "WMU library: a phone hearing 13 iBeacons, scans sorted by time and cut into sessions at gaps over 10 s; truth = beacon nearest the labelled cell",
                          dataset: "wmu-library") { try WMULibraryDataset.runs(directory: data) },
        ]
    }
}
