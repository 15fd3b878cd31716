/// A JSON array parameter (`$1::json`) made of JSON documents as they are: their bytes are joined,
/// not encoded again, so that a row can store a document exactly as it was published (`json`, unlike
/// `jsonb`, keeps each element's text).
public struct PostgresJSONArray: PostgresEncodable {
    public let documents: [[UInt8]]

    public init(_ documents: [[UInt8]]) {
        self.documents = documents
    }

    public var postgresText: String {
        var text: [UInt8] = [UInt8(ascii: "[")]
        text.reserveCapacity(documents.reduce(2) { $0 + $1.count + 1 })
        for (index, document) in documents.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            text += document
        }
        text.append(UInt8(ascii: "]"))
        return String(decoding: text, as: UTF8.self)
    }
}
