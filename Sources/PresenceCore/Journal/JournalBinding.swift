/// What an aggregator's journal belongs to: the database it serves (the id `presencectl migrate`
/// gave it, `presence.database_identity`, which copies of the database keep) and the topic prefix
/// its records are published under. A journal is laid over the database's state, published and
/// stored only by an aggregator with the same binding; any other moves it aside and starts anew.
public struct JournalBinding: Sendable, Equatable {
    public var database: String
    public var topicPrefix: String

    public init(database: String, topicPrefix: String) {
        self.database = database
        self.topicPrefix = topicPrefix
    }

    /// The binding's file: one `name value` line each.
    public var text: String {
        "database \(database)\ntopic-prefix \(topicPrefix)\n"
    }

    /// The binding a file holds, or nil when it holds no complete one.
    public init?(text: String) {
        var values: [Substring: Substring] = [:]
        for line in text.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            values[line[..<space]] = line[line.index(after: space)...]
        }
        guard let database = values["database"], let prefix = values["topic-prefix"], !database.isEmpty, !prefix.isEmpty else { return nil }
        self.init(database: String(database), topicPrefix: String(prefix))
    }

    /// What to do with the journal found on disk when starting with this binding.
    public enum Verdict: Sendable, Equatable {
        /// It is this database's (or new): carry on, and write the binding if it had none.
        case keep
        /// It belongs elsewhere: move it aside, for the reason given, and start a new one.
        case moveAside(reason: String)
    }

    /// The verdict on a journal whose saved binding is `saved` (nil: none, as journals written
    /// before bindings), which holds records or not, and whose identity the database has or has
    /// not recorded applying (`presence.aggregator_journal`). A journal without a binding is kept
    /// when it is empty or this database knows it, since it was then written for this database.
    public func verdict(saved: JournalBinding?, holdsRecords: Bool, knownToDatabase: Bool) -> Verdict {
        guard let saved else {
            if !holdsRecords || knownToDatabase { return .keep }
            return .moveAside(reason: "it names no database and this database has never applied it")
        }
        if saved.database != database {
            return .moveAside(reason: "it was written for the database with id \(saved.database), and this one has id \(database)")
        }
        if saved.topicPrefix != topicPrefix {
            return .moveAside(reason: "it was written for the topic prefix '\(saved.topicPrefix)', and this aggregator uses '\(topicPrefix)'")
        }
        return .keep
    }
}
