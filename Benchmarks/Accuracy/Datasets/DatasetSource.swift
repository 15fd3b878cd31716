/// Where a dataset comes from and under which licence, as its folder's SOURCE.txt says; the report
/// prints it beside the results the dataset produced.
struct DatasetSource: Sendable {
    /// The folder's name under the data directory (`tetam`, `sal-door`, `wmu-library`).
    var folder: String
    /// The SOURCE.txt lines that name the dataset, its origin and its licence.
    var lines: [String]

    static func read(_ directory: String, folder: String) throws(DatasetError) -> DatasetSource {
        let path = "\(directory)/\(folder)/SOURCE.txt"
        let wanted = ["Dataset:", "Repository:", "Copy taken from:", "Licence:"]
        let lines = try DatasetFiles.lines(path).map { String($0) }.filter { line in wanted.contains { line.hasPrefix($0) } }
        guard lines.contains(where: { $0.hasPrefix("Licence:") }) else {
            throw DatasetError("\(path): no 'Licence:' line; the dataset's terms must be known before its results are printed")
        }
        return DatasetSource(folder: folder, lines: lines)
    }
}
