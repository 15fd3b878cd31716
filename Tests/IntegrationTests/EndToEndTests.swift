import Testing

/// The tests that run the executables against each other. They run one at a time: they measure
/// decisions against the wall clock, and several aggregators, scanners and recorders sharing two
/// cores would turn timing into noise.
@Suite(.serialized) enum EndToEndTests {}
