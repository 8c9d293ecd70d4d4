import Foundation
import Logging

/// Stops the process on a broken invariant, so that libFuzzer records the input as a crash
/// ("deadly signal") and saves it. Every harness reports its findings through this, never by returning.
public func fuzzFail(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text = message()
    FileHandle.standardError.write(Data("FUZZ FINDING: \(text)\n".utf8))
    fatalError(text, file: file, line: line)
}

/// ``fuzzFail(_:file:line:)`` unless `condition` holds.
@inline(__always)
public func fuzzCheck(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() { fuzzFail(message(), file: file, line: line) }
}

/// A logger that discards everything: the engine logs every open at info level, which would flood the
/// fuzzer's output and slow it down.
public let quietLogger = Logger(label: "strata.fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
