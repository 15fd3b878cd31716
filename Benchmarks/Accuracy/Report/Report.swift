/// Prints the report's parts as plain text or as Markdown.
struct Report {
    let markdown: Bool

    func heading(_ text: String) {
        print(markdown ? "### \(text)\n" : text)
    }

    func line(_ text: String) {
        print(markdown ? "\(text)  " : text)
    }

    func table(_ text: String) {
        print("")
        print(text)
    }

    func list(_ title: String, _ items: [String]) {
        guard !items.isEmpty else { return }
        print("")
        print(markdown ? "**\(title)**\n" : "\(title):")
        for item in items { print(markdown ? "- \(item)" : "  - \(item)") }
    }
}
