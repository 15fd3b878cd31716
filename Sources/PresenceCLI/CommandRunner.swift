import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a command so that any error, from parsing or from running, ends the process with one
/// line on standard error naming what was wrong, and a non-zero status (64 for usage errors).
public enum CommandRunner {
    public static func main<Command: ParsableCommand>(_ type: Command.Type, arguments: [String]? = nil) async {
        let name = Command.configuration.commandName ?? "command"
        do {
            var command = try Command.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = Command.exitCode(for: error)
            if code == .success {
                Command.exit(withError: error)
            }
            let message = Command.message(for: error)
            let line = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? "failed"
            StandardStreams.error("\(name): \(line)")
            exit(code.rawValue)
        }
    }
}
