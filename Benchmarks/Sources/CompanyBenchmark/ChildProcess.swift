import Foundation

/// Runs this same executable as a child process with a hidden subcommand (`__child <task> <arguments...>`), for
/// figures that need a clean process: peak RSS (M1), a fresh heap for the bulk loads (W1), and a writer to kill
/// with SIGKILL (W10).
///
/// A child reports with lines `key value` on its standard output (``report(_:_:)``); its standard error goes
/// through to ours.
final class ChildProcess {
    static let subcommand = "__child"

    private let process = Process()
    private let output = Pipe()
    private var buffer = Data()
    /// The lines read so far that no one has taken yet.
    private var lines: [String] = []
    private var finishedReading = false

    /// Starts `__child task arguments...`.
    init(task: String, arguments: [String]) throws {
        // The kernel resolves /proc/self/exe in this process at spawn time: the child runs this very binary.
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = [Self.subcommand, task] + arguments
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// The next line of the child's output, or nil at its end.
    func nextLine() -> String? {
        while lines.isEmpty {
            if finishedReading { return nil }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                finishedReading = true
                if !buffer.isEmpty {
                    lines.append(String(decoding: buffer, as: UTF8.self))
                    buffer.removeAll()
                }
                continue
            }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                buffer.removeSubrange(buffer.startIndex...newline)
            }
        }
        return lines.removeFirst()
    }

    /// Reads lines until one starts with `key `, and returns the rest of it.
    func waitFor(_ key: String) throws -> String {
        while let line = nextLine() {
            if line.hasPrefix(key + " ") { return String(line.dropFirst(key.count + 1)) }
        }
        throw BenchmarkFailure("child \(process.arguments ?? []) ended without reporting \(key)")
    }

    /// Reads every remaining line as `key value` pairs and waits for a clean exit.
    func finish() throws -> [String: String] {
        var values: [String: String] = [:]
        while let line = nextLine() {
            guard let space = line.firstIndex(of: " ") else { continue }
            values[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw BenchmarkFailure(
                "child \(process.arguments ?? []) failed (status \(process.terminationStatus), reason \(process.terminationReason.rawValue))"
            )
        }
        return values
    }

    /// Kills the child with SIGKILL (a crash) and waits for it.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Drain whatever it wrote before dying.
        while nextLine() != nil {}
    }

    /// Runs a child to its end and returns its report.
    static func run(_ task: String, _ arguments: [String]) throws -> [String: String] {
        try ChildProcess(task: task, arguments: arguments).finish()
    }
}

/// A child's report line: `key value`.
func report(_ key: String, _ value: CustomStringConvertible) {
    emit("\(key) \(value)")
}

extension Dictionary where Key == String, Value == String {
    /// A reported value for a note: byte counts grouped by thousands, seconds with four significant digits.
    func shown(_ key: String) -> String {
        guard let text = self[key] else { return "?" }
        if let integer = Int(text) { return grouped(integer) }
        if let value = Double(text) { return format(value) }
        return text
    }

    /// A number a child reported, or a failure naming the missing key.
    func number(_ key: String) throws -> Double {
        guard let text = self[key], let value = Double(text) else {
            throw BenchmarkFailure("a child did not report \(key) (report: \(self))")
        }
        return value
    }
}
