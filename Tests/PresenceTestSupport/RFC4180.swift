/// Reads RFC 4180 text into records, independently of the library that writes it: fields split on
/// commas, quoted fields may hold commas, CR, LF and doubled quotes, records end in CRLF.
public enum RFC4180 {
    public static func records(_ text: String) -> [[String]]? {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(text.unicodeScalars)[...]
        while let c = characters.popFirst() {
            if quoted {
                if c == "\"" {
                    if characters.first == "\"" {
                        field.unicodeScalars.append(characters.removeFirst())
                    } else {
                        quoted = false
                    }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" {
                guard field.isEmpty else { return nil }
                quoted = true
            } else if c == "," {
                record.append(field)
                field = ""
            } else if c == "\r" {
                guard characters.popFirst() == "\n" else { return nil }
                record.append(field)
                records.append(record)
                (record, field) = ([], "")
            } else if c == "\n" {
                return nil
            } else {
                field.unicodeScalars.append(c)
            }
        }
        return quoted || !record.isEmpty || !field.isEmpty ? nil : records
    }
}
